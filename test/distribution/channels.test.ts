import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin, createTestApp, expectError, setSettings, type TestApp } from '../helpers/app.js';
import { adminId, identity, publish, softwareProduct, uploadRelease } from '../helpers/factories.js';
import { call, download, pkg, protectedFixture, siteCreds } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
  await setSettings(t, { rate_limit: 500 });
});
afterAll(async () => t.close());

const db = () => t.app.services.database.db;
const check = (q: Record<string, string>) => call(t, 'GET', `/software/check?${new URLSearchParams(q)}`);
const checkPost = (body: Record<string, unknown>) => call(t, 'POST', '/software/check', body);
const tokenCount = async () =>
  Number(
    (
      await db()
        .selectFrom('download_tokens')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

type Mix = [version: string, channel: string][];

/** A public product with these releases, uploaded in this order (each stable one becomes current). */
async function productWith(mix: Mix) {
  const product = await softwareProduct(t, { licensing_enabled: 'no' });
  for (const [version, channel] of mix) {
    await publish(t, product.id, version, channel === 'stable' ? [] : [['channel', channel]]);
  }
  return product.slug!;
}

const SITES = ['stable', 'rc', 'beta', 'alpha'] as const;

/**
 * Each mix with the version a site on stable, rc, beta and alpha is offered (null: none), from a
 * running version older than all of them. A site takes the best release of its channel or a more
 * stable one; version_compare decides "best" across channels.
 */
const TABLE: { name: string; mix: Mix; offered: (string | null)[] }[] = [
  {
    name: 'a stable release over an older beta of the same version line',
    mix: [
      ['1.9.9', 'stable'],
      ['2.0.0-beta.1', 'beta'],
      ['2.0.0', 'stable'],
    ],
    offered: ['2.0.0', '2.0.0', '2.0.0', '2.0.0'],
  },
  {
    name: 'a beta newer than the stable release',
    mix: [
      ['1.9.9', 'stable'],
      ['2.0.0-beta.1', 'beta'],
    ],
    offered: ['1.9.9', '1.9.9', '2.0.0-beta.1', '2.0.0-beta.1'],
  },
  {
    name: 'one release per channel, each newer than the more stable ones',
    mix: [
      ['1.0.0', 'stable'],
      ['1.1.0-rc1', 'rc'],
      ['1.2.0-beta1', 'beta'],
      ['1.3.0-alpha1', 'alpha'],
    ],
    offered: ['1.0.0', '1.1.0-rc1', '1.2.0-beta1', '1.3.0-alpha1'],
  },
  {
    name: 'an alpha uploaded after the stable release of its version',
    mix: [
      ['2.0.0', 'stable'],
      ['2.0.0-alpha1', 'alpha'],
    ],
    offered: ['2.0.0', '2.0.0', '2.0.0', '2.0.0'],
  },
  {
    name: 'PHP order of pre-release names: RC is newer than beta, whatever the upload order',
    mix: [
      ['2.0.0RC1', 'rc'],
      ['2.0.0beta2', 'beta'],
    ],
    offered: [null, '2.0.0RC1', '2.0.0RC1', '2.0.0RC1'],
  },
  {
    name: 'only a beta: stable sites are offered nothing',
    mix: [['1.0.0-beta1', 'beta']],
    offered: [null, null, '1.0.0-beta1', '1.0.0-beta1'],
  },
  {
    name: 'an older stable release uploaded after a newer beta: the higher version wins for beta',
    mix: [
      ['3.0.0-beta1', 'beta'],
      ['2.5.0', 'stable'],
    ],
    offered: ['2.5.0', '2.5.0', '3.0.0-beta1', '3.0.0-beta1'],
  },
  {
    name: 'an alpha never reaches a beta site, however new',
    mix: [
      ['1.0.0', 'stable'],
      ['9.0.0-alpha1', 'alpha'],
      ['1.1.0-beta1', 'beta'],
    ],
    offered: ['1.0.0', '1.0.0', '1.1.0-beta1', '9.0.0-alpha1'],
  },
];

describe('channels: which release each site is offered', () => {
  for (const row of TABLE) {
    it(row.name, async () => {
      const slug = await productWith(row.mix);
      for (const [i, channel] of SITES.entries()) {
        const res = await check({ slug, version: '0.1', channel });
        expect(res.statusCode, `${channel}: ${res.body}`).toBe(200);
        const b = res.json();
        const want = row.offered[i];
        expect({ channel, offered: b.update_available ? b.eligible_version : null }).toEqual({
          channel,
          offered: want,
        });
        expect(b.channel).toBe(channel);
        expect(b.channel_reason).toBeNull();
        const released = want === null ? null : row.mix.find(([v]) => v === want)![1];
        expect(b.release_channel).toBe(released);
        // The package route chooses the same release.
        const p = await pkg(t, { slug, purpose: 'install', channel });
        if (want === null) expect(p.statusCode).toBe(404);
        else {
          expect(p.statusCode).toBe(200);
          expect(p.json()).toMatchObject({
            version: want,
            channel,
            channel_reason: null,
            release_channel: released,
          });
        }
      }
      // No channel is stable.
      const plain = (await check({ slug, version: '0.1' })).json();
      expect(plain.update_available ? plain.eligible_version : null).toBe(row.offered[0]);
      expect(plain.channel).toBe('stable');
    });
  }

  it('POST takes the channel in the body; an update skips versions not newer than the running one', async () => {
    const slug = await productWith([
      ['1.0.0', 'stable'],
      ['1.1.0-beta1', 'beta'],
    ]);
    const res = await checkPost({ slug, version: '1.0.0', channel: 'beta' });
    expect(res.json()).toMatchObject({ update_available: true, eligible_version: '1.1.0-beta1' });
    const none = await checkPost({ slug, version: '1.1.0-beta1', channel: 'beta' });
    expect(none.json()).toMatchObject({ update_available: false, latest_version: '1.1.0-beta1' });
    const upd = await pkg(t, { slug, purpose: 'update', current_version: '1.0.0', channel: 'beta' });
    expect(upd.statusCode).toBe(200);
    expect(upd.json().version).toBe('1.1.0-beta1');
    expect((await download(t, upd.json().download_url)).statusCode).toBe(200);
  });

  it('the changelog shows each version with its channel', async () => {
    const slug = await productWith([
      ['1.0.0', 'stable'],
      ['1.1.0-rc1', 'rc'],
    ]);
    const res = await call(t, 'GET', `/software/changelog?slug=${slug}`);
    expect(res.statusCode).toBe(200);
    const versions = res.json().versions as { version: string; channel: string }[];
    expect(Object.fromEntries(versions.map((v) => [v.version, v.channel]))).toEqual({
      '1.0.0': 'stable',
      '1.1.0-rc1': 'rc',
    });
  });
});

describe('channels: what is refused', () => {
  it('an unknown channel is 400 invalid_channel on check (GET and POST) and package, and mints nothing', async () => {
    const slug = await productWith([['1.0.0', 'stable']]);
    const before = await tokenCount();
    for (const channel of ['gamma', 'STABLE', 'beta ', 'stable\u202e', '<script>', 'x'.repeat(5000)]) {
      expectError(await check({ slug, version: '0.1', channel }), 400, 'invalid_channel');
    }
    for (const channel of [5, true, ['beta'], { beta: 1 }, 'nightly']) {
      expectError(await checkPost({ slug, version: '0.1', channel }), 400, 'invalid_channel');
      expectError(await pkg(t, { slug, purpose: 'install', channel }), 400, 'invalid_channel');
    }
    // The request's own fields come first: a missing slug is still missing_params.
    expectError(await check({ version: '0.1', channel: 'gamma' }), 400, 'missing_params');
    expect(await tokenCount()).toBe(before);
  });

  it('an empty or null channel is the stable channel', async () => {
    const slug = await productWith([
      ['1.0.0', 'stable'],
      ['1.1.0-beta1', 'beta'],
    ]);
    expect((await check({ slug, version: '0.1', channel: '' })).json()).toMatchObject({
      eligible_version: '1.0.0',
      channel: 'stable',
    });
    expect((await checkPost({ slug, version: '0.1', channel: null })).json()).toMatchObject({
      eligible_version: '1.0.0',
      channel: 'stable',
    });
  });
});

describe('channels: license limits', () => {
  const policy = (channels?: string[]) => ({
    usage: { mode: 'lifetime' },
    updates: { mode: 'license' },
    ...(channels ? { channels } : {}),
  });

  async function licensedSite(channels: string[] | undefined) {
    const f = await protectedFixture(t, { license: { entitlement_policy: policy(channels) } });
    for (const [version, channel] of [
      ['1.1.0-rc1', 'rc'],
      ['1.2.0-beta1', 'beta'],
      ['1.3.0-alpha1', 'alpha'],
    ] as const) {
      await publish(t, f.product.id, version, [['channel', channel]]);
    }
    return f;
  }

  it('asking beyond the license serves the least stable channel it allows, with not_entitled', async () => {
    const f = await licensedSite(['stable', 'beta']);
    const ask = async (channel: string) =>
      (await check({ slug: f.slug, version: '1.0.0', channel, ...f.creds })).json();
    expect(await ask('alpha')).toMatchObject({
      channel: 'beta',
      channel_reason: 'not_entitled',
      eligible_version: '1.2.0-beta1',
      release_channel: 'beta',
    });
    expect(await ask('beta')).toMatchObject({
      channel: 'beta',
      channel_reason: null,
      eligible_version: '1.2.0-beta1',
    });
    // rc is not listed: a site asking for it is served stable, and a stable site is up to date.
    expect(await ask('rc')).toMatchObject({
      channel: 'stable',
      channel_reason: 'not_entitled',
      update_available: false,
      release_channel: null,
    });
    expect(await ask('stable')).toMatchObject({
      channel: 'stable',
      channel_reason: null,
      update_available: false,
    });
    const p = await pkg(t, { slug: f.slug, purpose: 'install', channel: 'alpha', ...f.creds });
    expect(p.statusCode).toBe(200);
    expect(p.json()).toMatchObject({
      version: '1.2.0-beta1',
      channel: 'beta',
      channel_reason: 'not_entitled',
    });
    expect((await download(t, p.json().download_url)).statusCode).toBe(200);
  });

  it('a license limited to stable is always served stable; one without a limit takes every channel', async () => {
    const narrow = await licensedSite(['stable']);
    expect(
      (await check({ slug: narrow.slug, version: '1.0.0', channel: 'alpha', ...narrow.creds })).json(),
    ).toMatchObject({ channel: 'stable', channel_reason: 'not_entitled', update_available: false });
    const open = await licensedSite(undefined);
    expect(
      (await check({ slug: open.slug, version: '1.0.0', channel: 'alpha', ...open.creds })).json(),
    ).toMatchObject({ channel: 'alpha', channel_reason: null, eligible_version: '1.3.0-alpha1' });
  });

  it("a product's default policy stores its channels (a license issued from it snapshots them)", async () => {
    const product = await softwareProduct(t);
    const patch = await admin(t, 'PATCH', `/products/${product.id}`, {
      entitlement_policy: policy(['stable', 'rc']),
    });
    expect(patch.statusCode).toBe(200);
    expect(patch.json().entitlement_policy.channels).toEqual(['stable', 'rc']);
  });

  it('a policy naming an unknown or repeated channel, or none, is refused and issues nothing', async () => {
    const product = await softwareProduct(t);
    const user = await adminId(t);
    for (const channels of [['nightly'], [], ['beta', 'beta'], 'beta', [1]]) {
      const res = await admin(t, 'POST', '/licenses', {
        product_id: product.id,
        user_id: user,
        entitlement_policy: { ...policy(), channels },
      });
      expect(res.statusCode, JSON.stringify(channels)).toBe(400);
      expect(['invalid_entitlement_policy', 'rest_invalid_param']).toContain(res.json().code);
    }
    const count = await db()
      .selectFrom('licenses')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('product_id', '=', product.id)
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(0);
  });

  it('an unreadable stored channel list fails closed (no update rights)', async () => {
    const f = await protectedFixture(t, { license: { entitlement_policy: policy(['stable']) } });
    await publish(t, f.product.id, '1.1.0');
    await db()
      .updateTable('licenses')
      .set({ entitlement_policy: JSON.stringify({ ...policy(), channels: ['nightly'] }) })
      .where('id', '=', f.licenseId)
      .execute();
    const b = (await check({ slug: f.slug, version: '1.0.0', ...f.creds })).json();
    expect(b.eligible).toBe(false);
  });
});

describe('channels: release administration', () => {
  const url = (p: number, v: number) => `/software/products/${p}/versions/${v}`;

  it('upload takes a channel; a non-stable release is not made current; refusals change nothing', async () => {
    const product = await softwareProduct(t);
    const stable = await publish(t, product.id, '1.0.0');
    expect(stable).toMatchObject({ channel: 'stable', rollout_percent: 100, is_current: true });
    const beta = await publish(t, product.id, '1.1.0-beta1', [['channel', 'beta']]);
    expect(beta).toMatchObject({ channel: 'beta', is_current: false });
    const bad = [
      [['channel', 'gamma']],
      [['channel', '']],
      [
        ['channel', 'beta'],
        ['set_current', 'true'],
      ],
      [['rollout_percent', '101']],
      [['rollout_percent', '-1']],
      [['rollout_percent', '1.5']],
      [['rollout_percent', 'ten']],
    ] as [string, string][][];
    const codes = [];
    for (const extra of bad) {
      const res = await uploadRelease(t, product.id, '2.0.0', extra);
      expect(res.statusCode, res.body).toBe(400);
      codes.push(res.json().code);
    }
    expect(codes).toEqual([
      'invalid_channel',
      'invalid_channel',
      'invalid_parameters',
      'invalid_rollout_percent',
      'invalid_rollout_percent',
      'invalid_rollout_percent',
      'invalid_rollout_percent',
    ]);
    const list = (await admin(t, 'GET', `/software/products/${product.id}/versions`)).json();
    expect(list.releases.map((r: { version: string }) => r.version).sort()).toEqual(['1.0.0', '1.1.0-beta1']);
  });

  it('the edit route changes the channel (a current release moved off stable stops being current)', async () => {
    const product = await softwareProduct(t);
    const r = await publish(t, product.id, '1.0.0');
    const res = await admin(t, 'PUT', url(product.id, r.version_id), { channel: 'rc' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ channel: 'rc', is_current: false });
    expectError(
      await admin(t, 'PUT', url(product.id, r.version_id), { is_current: true }),
      400,
      'invalid_parameters',
    );
    for (const channel of ['gamma', 3, null, '']) {
      expectError(await admin(t, 'PUT', url(product.id, r.version_id), { channel }), 400, 'invalid_channel');
    }
    const back = await admin(t, 'PUT', url(product.id, r.version_id), {
      channel: 'stable',
      is_current: true,
    });
    expect(back.json()).toMatchObject({ channel: 'stable', is_current: true });
    const events = (
      await admin(t, 'GET', `/audit-events?entity_type=release&entity_id=${r.version_id}`)
    ).json() as { action: string; changes: Record<string, { before: unknown; after: unknown }> }[];
    expect(events.find((e) => e.changes.channel?.after === 'rc')).toBeTruthy();
  });

  it('a stable site stops being offered a release moved to beta at once (the kept candidates move)', async () => {
    const f = await protectedFixture(t);
    const next = await publish(t, f.product.id, '1.1.0');
    const ask = async () => (await check({ slug: f.slug, version: '1.0.0', ...f.creds })).json();
    expect((await ask()).eligible_version).toBe('1.1.0');
    await admin(t, 'PUT', url(f.product.id, next.version_id), { channel: 'beta' });
    expect((await ask()).update_available).toBe(false);
    // Changed by hand in SQL: the next check sees it too.
    await db().updateTable('releases').set({ channel: 'stable' }).where('id', '=', next.version_id).execute();
    expect((await ask()).eligible_version).toBe('1.1.0');
  });

  it('sites_taken counts the distinct sites that downloaded each release', async () => {
    const f = await protectedFixture(t, { license: { activation_limit: 5 } });
    const other = identity('two.example.com');
    const act = await call(t, 'POST', '/licenses/activate', { license_key: f.key, ...other });
    expect(act.statusCode).toBe(200);
    for (const creds of [f.creds, f.creds, siteCreds(f.key, other)]) {
      const p = await pkg(t, { slug: f.slug, purpose: 'install', ...creds });
      expect((await download(t, p.json().download_url)).statusCode).toBe(200);
    }
    // A token minted but never used does not count.
    await pkg(t, { slug: f.slug, purpose: 'install', ...f.creds });
    const list = (await admin(t, 'GET', `/software/products/${f.product.id}/versions`)).json();
    expect(list.releases[0]).toMatchObject({ version: '1.0.0', sites_taken: 2 });
  });
});
