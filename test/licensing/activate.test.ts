import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/http/errors.js';
import type { Identity } from '../../src/modules/identity/identity.js';
import { ActivationService } from '../../src/modules/licensing/activation.service.js';
import { LicenseRepository } from '../../src/modules/licensing/license.repository.js';
import type { OAuthActivation } from '../../src/modules/licensing/oauth.js';
import { createTestApp, expectError, post, setSettings, type TestApp } from '../helpers/app.js';
import {
  adminId,
  createLicense,
  createProduct,
  createSubscription,
  identity,
  licenseFixture,
  setLicenseColumns,
} from '../helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { TEST_CLOCK: '1' } });
});
afterAll(async () => t.close());

const db = () => t.app.services.database.db;
const activate = (payload: unknown, headers: Record<string, string> = {}) =>
  post(t, '/licenses/activate', payload, headers);
const activeCount = async (licenseId: number) =>
  Number(
    (
      await db()
        .selectFrom('activations')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('license_id', '=', licenseId)
        .where('status', '=', 'active')
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('POST /licenses/activate', () => {
  it('activates a new identity: exactly the documented fields, seat taken', async () => {
    const { key, license, product } = await licenseFixture(t, { activation_limit: 3 });
    const site = identity('https://Shop.Example.com/wp-admin');
    const res = await activate(
      { license_key: key, ...site, machine_id: 'host-1' },
      { 'user-agent': 'WordPress/6.5; https://shop.example.com' },
    );
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(
      ['activation_id', 'activations_remaining', 'product_id', 'success', 'variation_id'].sort(),
    );
    expect(body).toMatchObject({
      success: true,
      activations_remaining: 2,
      product_id: product.id,
      variation_id: 0,
    });
    const row = await db()
      .selectFrom('activations')
      .selectAll()
      .where('id', '=', body.activation_id)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      license_id: license.id,
      domain: 'https://Shop.Example.com/wp-admin',
      domain_normalized: 'shop.example.com',
      installation_id: site.installation_id,
      machine_id: 'host-1',
      user_agent: 'WordPress/6.5; https://shop.example.com',
      status: 'active',
      activation_revision: 1,
      deactivated_at: null,
    });
    expect(row.identity_key).toMatch(/^[0-9a-f]{64}$/);
  });

  it('repeating the same identity is idempotent: same id, "Already activated", no slot used', async () => {
    const { key, license } = await licenseFixture(t, { activation_limit: 2 });
    const site = identity();
    const first = (await activate({ license_key: key, ...site })).json();
    // Another spelling of the same site is the same identity.
    const again = await activate({
      license_key: key,
      domain: 'HTTPS://EXAMPLE.COM:443/',
      installation_id: site.installation_id,
    });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({
      success: true,
      activation_id: first.activation_id,
      activations_remaining: 1,
      product_id: license.product_id,
      variation_id: 0,
      message: 'Already activated',
    });
    expect(await activeCount(license.id)).toBe(1);
  });

  it('the same domain with another installation is another identity (and takes a slot)', async () => {
    const { key } = await licenseFixture(t, { activation_limit: 2 });
    const a = (await activate({ license_key: key, ...identity('example.com') })).json();
    const b = (await activate({ license_key: key, ...identity('example.com') })).json();
    expect(b.activation_id).not.toBe(a.activation_id);
    expect(b.activations_remaining).toBe(0);
  });

  it('a full license refuses a new identity with 403 activation_limit_reached and stores nothing', async () => {
    const { key, license } = await licenseFixture(t, { activation_limit: 1 });
    await activate({ license_key: key, ...identity('one.example') });
    expectError(
      await activate({ license_key: key, ...identity('two.example') }),
      403,
      'activation_limit_reached',
    );
    expect(await activeCount(license.id)).toBe(1);
  });

  it('machine_id is metadata only: a new machine_id on the same identity is the same activation', async () => {
    const { key } = await licenseFixture(t, { activation_limit: 1 });
    const site = identity();
    const a = (await activate({ license_key: key, ...site, machine_id: 'm1' })).json();
    const b = (await activate({ license_key: key, ...site, machine_id: 'm2' })).json();
    expect(b.activation_id).toBe(a.activation_id);
    expect(b.message).toBe('Already activated');
  });

  describe('activation limit resolution', () => {
    const limitOf = async (
      product: Parameters<typeof createProduct>[1],
      variationIndex?: number,
      own?: number,
    ) => {
      const p = await createProduct(t, product, { via: 'database' });
      const lic = await createLicense(t, {
        product_id: p.id,
        user_id: await adminId(t),
        ...(variationIndex !== undefined ? { variation_id: p.variations[variationIndex]!.id } : {}),
        ...(own !== undefined ? { activation_limit: own } : {}),
      });
      const res = (await activate({ license_key: lic.license_key, ...identity() })).json();
      return { limit: lic.activation_limit, remaining: res.activations_remaining };
    };

    it('a variation override wins over the parent', async () => {
      expect(
        await limitOf({ activation_limit: 5, variations: [{ name: 'Agency', activation_limit: 2 }] }, 0),
      ).toEqual({
        limit: 2,
        remaining: 1,
      });
    });
    it('an empty variation value inherits the parent', async () => {
      expect(
        await limitOf({ activation_limit: 5, variations: [{ name: 'Solo', activation_limit: null }] }, 0),
      ).toEqual({
        limit: 5,
        remaining: 4,
      });
    });
    it('a variation value of 0 means unlimited even under a limited parent', async () => {
      expect(
        await limitOf({ activation_limit: 5, variations: [{ name: 'Unlimited', activation_limit: 0 }] }, 0),
      ).toEqual({
        limit: 0,
        remaining: -1,
      });
    });
    it('no product value falls back to settings.default_activation_limit', async () => {
      await setSettings(t, { default_activation_limit: 4 });
      expect(await limitOf({})).toEqual({ limit: 4, remaining: 3 });
      await setSettings(t, { default_activation_limit: 1 });
    });
    it('a global default of 0 is unlimited: activations_remaining -1', async () => {
      await setSettings(t, { default_activation_limit: 0 });
      const { key } = await licenseFixture(t);
      for (let i = 0; i < 5; i++) {
        const res = await activate({ license_key: key, ...identity(`s${i}.example`) });
        expect(res.json().activations_remaining).toBe(-1);
      }
      await setSettings(t, { default_activation_limit: 1 });
    });
    it("the license's own limit wins over everything", async () => {
      expect(await limitOf({ activation_limit: 5 }, undefined, 3)).toEqual({ limit: 3, remaining: 2 });
    });
  });

  describe('license state refusals (403 REST errors)', () => {
    it('unknown key -> invalid_license', async () => {
      expectError(await activate({ license_key: 'NOPE-NOPE', ...identity() }), 403, 'invalid_license');
    });
    it('revoked -> revoked, and nothing is stored', async () => {
      const { key, license } = await licenseFixture(t);
      await t.app.inject({ method: 'DELETE', url: `/v1/licenses/${license.id}`, headers: t.adminAuth });
      expectError(await activate({ license_key: key, ...identity() }), 403, 'revoked');
      expect(await activeCount(license.id)).toBe(0);
    });
    it('usage expired -> expired', async () => {
      const now = t.app.services.clock.now();
      const { key } = await licenseFixture(
        t,
        {},
        { usage_expires_at: new Date(now.getTime() + 3600_000).toISOString() },
      );
      expect((await activate({ license_key: key, ...identity('a.example') })).statusCode).toBe(200);
      await t.app.services.testClock!.advance(7200);
      expectError(await activate({ license_key: key, ...identity('b.example') }), 403, 'expired');
    });
    it('unreadable usage expiry -> invalid_usage_expiry', async () => {
      const { key, license } = await licenseFixture(t);
      await setLicenseColumns(db(), license.id, { usage_expires_at: 'next tuesday' });
      expectError(await activate({ license_key: key, ...identity() }), 403, 'invalid_usage_expiry');
    });
    it('a stored status that is neither active nor revoked -> license_inactive', async () => {
      const { key, license } = await licenseFixture(t);
      await db()
        .updateTable('licenses')
        .set({ status: 'suspended' as 'active' })
        .where('id', '=', license.id)
        .execute();
      expectError(await activate({ license_key: key, ...identity() }), 403, 'license_inactive');
    });
    it('linked subscription not active -> subscription_inactive; pending-cancel still activates', async () => {
      const owner = await adminId(t);
      const p = await createProduct(t, {}, { via: 'database' });
      const cancelled = await createSubscription(db(), owner, p.id, 'cancelled');
      const lic = await createLicense(t, { product_id: p.id, user_id: owner, subscription_id: cancelled });
      expectError(
        await activate({ license_key: lic.license_key, ...identity() }),
        403,
        'subscription_inactive',
      );
      const pending = await createSubscription(db(), owner, p.id, 'pending-cancel');
      const ok = await createLicense(t, { product_id: p.id, user_id: owner, subscription_id: pending });
      expect((await activate({ license_key: ok.license_key, ...identity() })).statusCode).toBe(200);
    });
  });

  describe('customer-approval (OAuth) mode', () => {
    it('without return_url -> 400 missing_return_url (product override)', async () => {
      const { key } = await licenseFixture(t, { activation_mode: 'oauth' });
      expectError(await activate({ license_key: key, ...identity() }), 400, 'missing_return_url');
    });
    it('a return_url on another domain -> 400 invalid_return_url', async () => {
      const { key } = await licenseFixture(t, { activation_mode: 'oauth' });
      const site = identity('shop.example.com');
      for (const return_url of [
        'https://evil.example/cb',
        'not a url',
        'javascript:alert(1)',
        'https://shop.example.com:8443/cb',
      ]) {
        expectError(await activate({ license_key: key, ...site, return_url }), 400, 'invalid_return_url');
      }
    });
    it('with the flow not installed -> 501 oauth_unavailable, never a fake redirect', async () => {
      // The app installs the real flow (test/oauth); a service built without one must refuse.
      const { services } = t.app;
      const bare = new ActivationService(
        new LicenseRepository(services.database),
        services.clock,
        services.settings,
        services.audit,
      );
      const { key, license } = await licenseFixture(t, { activation_mode: 'oauth' });
      const site = identity('shop.example.com');
      const caller = { ip: '127.0.0.1', user_agent: 'test' };
      const code = (p: Promise<unknown>) =>
        p.then(
          () => 'none',
          (e: ApiError) => e.code,
        );
      expect(
        await code(
          bare.activate(
            { license_key: key, ...site, return_url: 'https://shop.example.com/wp-admin/cb' },
            caller,
          ),
        ),
      ).toBe('oauth_unavailable');
      expect(await code(bare.activate({ license_key: key, ...site, activation_token: 'abc' }, caller))).toBe(
        'oauth_unavailable',
      );
      expect(await activeCount(license.id)).toBe(0);
    });
    it('the store setting applies when the product does not override; simple override beats it', async () => {
      await setSettings(t, { activation_mode: 'oauth' });
      try {
        const { key } = await licenseFixture(t);
        expectError(await activate({ license_key: key, ...identity() }), 400, 'missing_return_url');
        const simple = await licenseFixture(t, { activation_mode: 'simple' });
        expect((await activate({ license_key: simple.key, ...identity() })).statusCode).toBe(200);
      } finally {
        await setSettings(t, { activation_mode: 'simple' });
      }
    });
    it('through an installed flow: 200 oauth_required with its redirect_url, then the token activates once', async () => {
      const consumed = new Set<string>();
      const seen: Identity[] = [];
      const fake: OAuthActivation = {
        async begin({ identity: id, return_url }) {
          seen.push(id);
          return { redirect_url: `https://store.example/approve?r=${encodeURIComponent(return_url)}` };
        },
        async consume(token, binding) {
          if (token !== `ok-${binding.identity.installation_id}`) throw new ApiError('invalid_token');
          if (consumed.has(token)) throw new ApiError('token_consumed');
          consumed.add(token);
        },
      };
      t.app.services.activations.useOAuth(fake);
      const { key, license } = await licenseFixture(t, { activation_mode: 'oauth' }, { activation_limit: 2 });
      const site = identity('shop.example.com');
      const res = await activate({ license_key: key, ...site, return_url: 'https://shop.example.com/cb' });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({
        success: false,
        code: 'oauth_required',
        message: expect.any(String),
        redirect_url: 'https://store.example/approve?r=https%3A%2F%2Fshop.example.com%2Fcb',
      });
      expect(seen[0]?.domain_normalized).toBe('shop.example.com');
      expectError(
        await activate({ license_key: key, ...site, activation_token: 'wrong' }),
        403,
        'invalid_token',
      );
      const ok = await activate({
        license_key: key,
        ...site,
        activation_token: `ok-${site.installation_id}`,
      });
      expect(ok.statusCode).toBe(200);
      expect(ok.json()).toMatchObject({ success: true, activations_remaining: 1 });
      // A used token on another (deactivated-then-retried) activation is refused.
      await post(t, '/licenses/deactivate', { license_key: key, ...site });
      expectError(
        await activate({ license_key: key, ...site, activation_token: `ok-${site.installation_id}` }),
        403,
        'token_consumed',
      );
      const fresh = identity('shop.example.com');
      expect(
        (await activate({ license_key: key, ...fresh, activation_token: `ok-${fresh.installation_id}` }))
          .statusCode,
      ).toBe(200);
      const site2 = fresh;
      // Already active: repeating needs no approval and uses no slot.
      const again = await activate({ license_key: key, ...site2 });
      expect(again.json()).toMatchObject({ success: true, message: 'Already activated' });
      expect(await activeCount(license.id)).toBe(1);
    });
  });

  it('licensing switched off: 503 licensing_unavailable, nothing stored (fail-closed)', async () => {
    const { key, license } = await licenseFixture(t);
    await setSettings(t, { licensing_enabled: false });
    try {
      expectError(await activate({ license_key: key, ...identity() }), 503, 'licensing_unavailable');
    } finally {
      await setSettings(t, { licensing_enabled: true });
    }
    expect(await activeCount(license.id)).toBe(0);
  });

  describe('bad input: a specific 400 code and nothing changes', () => {
    let key: string;
    let licenseId: number;
    beforeAll(async () => {
      const f = await licenseFixture(t, { activation_limit: 10 });
      key = f.key;
      licenseId = f.license.id;
    });
    const ok = () => ({ license_key: key, ...identity() });
    const cases: [string, () => unknown, string][] = [
      ['no body at all', () => undefined, 'missing_key'],
      ['license_key missing', () => ({ ...ok(), license_key: undefined }), 'missing_key'],
      ['license_key empty', () => ({ ...ok(), license_key: '' }), 'missing_key'],
      ['license_key a number', () => ({ ...ok(), license_key: 12345 }), 'rest_invalid_param'],
      ['license_key 10 kB', () => ({ ...ok(), license_key: 'K'.repeat(10_240) }), 'rest_invalid_param'],
      ['domain missing', () => ({ ...ok(), domain: undefined }), 'missing_identity'],
      ['domain empty', () => ({ ...ok(), domain: '' }), 'missing_identity'],
      ['installation_id missing', () => ({ ...ok(), installation_id: undefined }), 'missing_identity'],
      ['installation_id empty', () => ({ ...ok(), installation_id: '' }), 'missing_identity'],
      ['domain a number', () => ({ ...ok(), domain: 42 }), 'invalid_identity'],
      ['domain an array', () => ({ ...ok(), domain: ['example.com'] }), 'invalid_identity'],
      ['domain null', () => ({ ...ok(), domain: null }), 'invalid_identity'],
      ['domain 10 kB', () => ({ ...ok(), domain: `${'a'.repeat(10_240)}.com` }), 'invalid_identity'],
      [
        'domain with a control character',
        () => ({ ...ok(), domain: 'exa\u0007mple.com' }),
        'invalid_identity',
      ],
      [
        'domain with a newline',
        () => ({ ...ok(), domain: 'example.com\r\nX-Injected: 1' }),
        'invalid_identity',
      ],
      ['domain garbage', () => ({ ...ok(), domain: '::::' }), 'invalid_identity'],
      ['installation_id not a UUID', () => ({ ...ok(), installation_id: 'abc' }), 'invalid_identity'],
      [
        'installation_id uppercase',
        () => ({ ...ok(), installation_id: ok().installation_id.toUpperCase() }),
        'invalid_identity',
      ],
      ['installation_id a number', () => ({ ...ok(), installation_id: 7 }), 'invalid_identity'],
      ['machine_id an object', () => ({ ...ok(), machine_id: { a: 1 } }), 'rest_invalid_param'],
      [
        'machine_id with control characters',
        () => ({ ...ok(), machine_id: 'a\u0000b' }),
        'rest_invalid_param',
      ],
      ['machine_id 10 kB', () => ({ ...ok(), machine_id: 'm'.repeat(10_240) }), 'rest_invalid_param'],
      ['return_url a number', () => ({ ...ok(), return_url: 5 }), 'invalid_return_url'],
      ['activation_token a number', () => ({ ...ok(), activation_token: 5 }), 'rest_invalid_param'],
      ['an unknown field', () => ({ ...ok(), activation_mode: 'simple' }), 'invalid_parameters'],
    ];
    for (const [why, body, code] of cases) {
      it(`${why} -> 400 ${code}`, async () => {
        const payload = body();
        const res =
          payload === undefined
            ? await t.app.inject({ method: 'POST', url: '/v1/licenses/activate' })
            : await activate(payload);
        expectError(res, 400, code);
        expect(await activeCount(licenseId)).toBe(0);
      });
    }
    it('a body that is not JSON -> 400 rest_invalid_json', async () => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/licenses/activate',
        headers: { 'content-type': 'application/json' },
        payload: '{"license_key":',
      });
      expectError(res, 400, 'rest_invalid_json');
    });
  });
});
