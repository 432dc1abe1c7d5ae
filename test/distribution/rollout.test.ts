import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inRollout, rolloutBucket } from '../../src/modules/releases/channels.js';
import { admin, createTestApp, expectError, setSettings, type TestApp } from '../helpers/app.js';
import { publish, softwareProduct } from '../helpers/factories.js';
import { call, download, pkg, protectedFixture } from './helpers.js';

describe('the rollout rule (pure)', () => {
  it('is deterministic, and a site inside at 10% stays inside at every higher percentage', () => {
    const ids = Array.from({ length: 2000 }, () => randomUUID());
    for (const id of ids) {
      expect(rolloutBucket(7, id)).toBe(rolloutBucket(7, id));
      let inside = false;
      for (const percent of [1, 10, 25, 50, 75, 99, 100]) {
        const now = inRollout(7, percent, id);
        if (inside) expect(now).toBe(true);
        inside = now;
      }
    }
  });

  it('about the given share of 10,000 random sites is inside (10% and 50%)', () => {
    const ids = Array.from({ length: 10_000 }, () => randomUUID());
    const share = (percent: number) => ids.filter((id) => inRollout(42, percent, id)).length / ids.length;
    const at10 = share(10);
    expect(at10).toBeGreaterThan(0.085);
    expect(at10).toBeLessThan(0.115);
    const at50 = share(50);
    expect(at50).toBeGreaterThan(0.47);
    expect(at50).toBeLessThan(0.53);
  });

  it('0 is nobody, 100 is everybody, and a site without a key is outside below 100', () => {
    const ids = Array.from({ length: 500 }, () => randomUUID());
    expect(ids.some((id) => inRollout(3, 0, id))).toBe(false);
    expect(ids.every((id) => inRollout(3, 100, id))).toBe(true);
    expect(inRollout(3, 99, null)).toBe(false);
    expect(inRollout(3, 100, null)).toBe(true);
  });

  it('is the first 4 bytes of SHA-256("release_id:site") modulo 10000, and differs between releases', () => {
    const expected = createHash('sha256').update('1:a').digest().readUInt32BE(0) % 10000;
    expect(rolloutBucket(1, 'a')).toBe(expected);
    const ids = Array.from({ length: 200 }, () => randomUUID());
    const same = ids.filter((id) => rolloutBucket(1, id) === rolloutBucket(2, id)).length;
    expect(same).toBeLessThan(5);
  });
});

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
  await setSettings(t, { rate_limit: 500 });
});
afterAll(async () => t.close());

const check = (q: Record<string, string>) => call(t, 'GET', `/software/check?${new URLSearchParams(q)}`);
const rolloutUrl = (p: number, v: number) => `/software/products/${p}/versions/${v}/rollout`;
const setRollout = async (p: number, v: number, percent: number) => {
  const res = await admin(t, 'PATCH', rolloutUrl(p, v), { rollout_percent: percent });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json().rollout_percent).toBe(percent);
};

/** An installation id whose bucket for the release is inside `[lo, hi)`. */
function idIn(releaseId: number, lo: number, hi: number): string {
  for (;;) {
    const id = randomUUID();
    const b = rolloutBucket(releaseId, id);
    if (b >= lo && b < hi) return id;
  }
}

describe('staged rollouts over HTTP (public product)', () => {
  it('inside sites get the new release, outside ones the previous; raise, pause and complete', async () => {
    const product = await softwareProduct(t, { licensing_enabled: 'no' });
    const slug = product.slug!;
    await publish(t, product.id, '1.0.0');
    const next = await publish(t, product.id, '1.1.0', [['rollout_percent', '10']]);
    expect(next.rollout_percent).toBe(10);
    const early = idIn(next.version_id, 0, 1000); // inside at 10%
    const middle = idIn(next.version_id, 1000, 5000); // inside from 50%
    const late = idIn(next.version_id, 9000, 10000); // inside only at 100%
    const offered = async (installation_id: string) => {
      const b = (await check({ slug, version: '0.9', installation_id })).json();
      return b.eligible_version as string | null;
    };
    const packaged = async (installation_id: string) =>
      (await pkg(t, { slug, purpose: 'install', installation_id })).json().version as string;

    expect([await offered(early), await offered(middle), await offered(late)]).toEqual([
      '1.1.0',
      '1.0.0',
      '1.0.0',
    ]);
    expect([await packaged(early), await packaged(middle), await packaged(late)]).toEqual([
      '1.1.0',
      '1.0.0',
      '1.0.0',
    ]);
    // Outside sites on the previous release see no update at all.
    expect((await check({ slug, version: '1.0.0', installation_id: late })).json().update_available).toBe(
      false,
    );

    await setRollout(product.id, next.version_id, 50);
    expect([await offered(early), await offered(middle), await offered(late)]).toEqual([
      '1.1.0',
      '1.1.0',
      '1.0.0',
    ]);

    await setRollout(product.id, next.version_id, 0);
    expect([await offered(early), await offered(middle), await offered(late)]).toEqual([
      '1.0.0',
      '1.0.0',
      '1.0.0',
    ]);
    expect(await packaged(early)).toBe('1.0.0');

    await setRollout(product.id, next.version_id, 100);
    expect([await offered(early), await offered(middle), await offered(late)]).toEqual([
      '1.1.0',
      '1.1.0',
      '1.1.0',
    ]);
    const p = await pkg(t, { slug, purpose: 'install', installation_id: late });
    expect((await download(t, p.json().download_url)).statusCode).toBe(200);
  });

  it('without an installation id: the normalised domain of site_url places the site, and no site is outside', async () => {
    const product = await softwareProduct(t, { licensing_enabled: 'no' });
    const slug = product.slug!;
    await publish(t, product.id, '1.0.0');
    const next = await publish(t, product.id, '1.1.0', [['rollout_percent', '1']]);
    // A domain inside at 1%, asked with different spellings of the same site.
    let domain = '';
    for (let i = 0; ; i++) {
      domain = `site${i}.example.com`;
      if (rolloutBucket(next.version_id, domain) < 100) break;
    }
    for (const site_url of [`https://${domain}/`, `http://${domain.toUpperCase()}`]) {
      expect((await check({ slug, version: '0.9', site_url })).json().eligible_version).toBe('1.1.0');
    }
    expect((await check({ slug, version: '0.9' })).json().eligible_version).toBe('1.0.0');
    // An installation id that is not a UUIDv4 is no key; the domain still is.
    expect(
      (await check({ slug, version: '0.9', installation_id: 'not-a-uuid', site_url: domain })).json()
        .eligible_version,
    ).toBe('1.1.0');
  });
});

describe('staged rollouts over HTTP (protected product)', () => {
  it("the site's installation id places it; check and package agree", async () => {
    const f = await protectedFixture(t);
    const next = await publish(t, f.product.id, '1.1.0');
    const bucket = rolloutBucket(next.version_id, f.site.installation_id);
    const inside = Math.min(100, Math.floor(bucket / 100) + 1);
    const outside = Math.floor(bucket / 100); // 0 (paused) when the bucket is below 100
    const ask = async () => (await check({ slug: f.slug, version: '1.0.0', ...f.creds })).json();
    await setRollout(f.product.id, next.version_id, outside);
    expect((await ask()).update_available).toBe(false);
    const update = { slug: f.slug, purpose: 'update', current_version: '1.0.0', ...f.creds };
    expectError(await pkg(t, update), 404, 'no_eligible_release');
    expect((await pkg(t, { slug: f.slug, purpose: 'install', ...f.creds })).json().version).toBe('1.0.0');
    await setRollout(f.product.id, next.version_id, inside);
    expect((await ask()).eligible_version).toBe('1.1.0');
    const p = await pkg(t, update);
    expect(p.json().version).toBe('1.1.0');
    expect((await download(t, p.json().download_url)).statusCode).toBe(200);
  });
});

describe('the rollout route', () => {
  it('answers bad input with a specific 400 and changes nothing; audited; 404 and 401', async () => {
    const product = await softwareProduct(t);
    const r = await publish(t, product.id, '1.0.0');
    const url = rolloutUrl(product.id, r.version_id);
    for (const body of [
      { rollout_percent: 101 },
      { rollout_percent: -1 },
      { rollout_percent: 1.5 },
      { rollout_percent: '50' },
      { rollout_percent: null },
    ]) {
      expectError(await admin(t, 'PATCH', url, body), 400, 'invalid_rollout_percent');
    }
    expectError(await admin(t, 'PATCH', url, {}), 400, 'rest_missing_param');
    const unknown = await admin(t, 'PATCH', url, { rollout_percent: 5, channel: 'beta' });
    expect(unknown.statusCode).toBe(400);
    const malformed = await t.app.inject({
      method: 'PATCH',
      url: `/v1${url}`,
      headers: { ...t.adminAuth, 'content-type': 'application/json' },
      payload: '{"rollout_percent": ',
    });
    expectError(malformed, 400, 'rest_invalid_json');
    const list = (await admin(t, 'GET', `/software/products/${product.id}/versions`)).json();
    expect(list.releases[0].rollout_percent).toBe(100);

    await setRollout(product.id, r.version_id, 25);
    await setRollout(product.id, r.version_id, 25);
    const events = (
      await admin(t, 'GET', `/audit-events?entity_type=release&entity_id=${r.version_id}`)
    ).json() as { action: string; changes: Record<string, { before: unknown; after: unknown }> }[];
    const rollouts = events.filter((e) => e.action === 'rollout');
    expect(rollouts).toHaveLength(1);
    expect(rollouts[0]!.changes.rollout_percent).toEqual({ before: 100, after: 25 });

    expectError(
      await admin(t, 'PATCH', rolloutUrl(product.id, 999999), { rollout_percent: 5 }),
      404,
      'release_not_found',
    );
    const anon = await t.app.inject({ method: 'PATCH', url: `/v1${url}`, payload: { rollout_percent: 5 } });
    expect(anon.statusCode).toBe(401);
  });

  it('the edit route sets the rollout too', async () => {
    const product = await softwareProduct(t);
    const r = await publish(t, product.id, '1.0.0');
    const res = await admin(t, 'PUT', `/software/products/${product.id}/versions/${r.version_id}`, {
      rollout_percent: 30,
    });
    expect(res.json().rollout_percent).toBe(30);
    expectError(
      await admin(t, 'PUT', `/software/products/${product.id}/versions/${r.version_id}`, {
        rollout_percent: 300,
      }),
      400,
      'invalid_rollout_percent',
    );
  });
});
