import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, expectError, post, setSettings, type TestApp } from '../helpers/app.js';
import { identity, licenseFixture } from '../helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const db = () => t.app.services.database.db;
const activate = (payload: unknown) => post(t, '/licenses/activate', payload);
const deactivate = (payload: unknown) => post(t, '/licenses/deactivate', payload);
const activation = (id: number) =>
  db().selectFrom('activations').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

async function activatedLicense(limit = 1) {
  const f = await licenseFixture(t, { activation_limit: limit });
  const site = identity('site.example');
  const res = (await activate({ license_key: f.key, ...site })).json();
  return { ...f, site, activationId: res.activation_id as number };
}

describe('POST /licenses/deactivate', () => {
  it('by activation_id: {success:true}, slot freed, revision bumped, deactivated_at set', async () => {
    const { key, activationId } = await activatedLicense(1);
    const res = await deactivate({ license_key: key, activation_id: activationId });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ success: true });
    const row = await activation(activationId);
    expect(row.status).toBe('deactivated');
    expect(row.deactivated_at).not.toBeNull();
    expect(row.activation_revision).toBe(2);
    // The freed slot takes a new identity.
    expect((await activate({ license_key: key, ...identity('other.example') })).statusCode).toBe(200);
  });

  it('by the full identity, in any spelling of the domain', async () => {
    const { key, site, activationId } = await activatedLicense();
    const res = await deactivate({
      license_key: key,
      domain: 'HTTP://SITE.EXAMPLE:80/',
      installation_id: site.installation_id,
    });
    expect(res.json()).toEqual({ success: true });
    expect((await activation(activationId)).status).toBe('deactivated');
  });

  it('is idempotent: a second deactivation succeeds and changes nothing', async () => {
    const { key, site, activationId } = await activatedLicense(2);
    await deactivate({ license_key: key, activation_id: activationId });
    const before = await activation(activationId);
    expect((await deactivate({ license_key: key, activation_id: activationId })).json()).toEqual({
      success: true,
    });
    expect((await deactivate({ license_key: key, ...site })).json()).toEqual({ success: true });
    expect(await activation(activationId)).toEqual(before);
  });

  it('re-activating after deactivation creates a new activation; the old row keeps its history', async () => {
    const { key, site, activationId } = await activatedLicense();
    await deactivate({ license_key: key, ...site });
    const again = (await activate({ license_key: key, ...site })).json();
    expect(again.activation_id).not.toBe(activationId);
    expect(again.message).toBeUndefined();
    await deactivate({ license_key: key, ...site });
    expect((await activation(again.activation_id)).status).toBe('deactivated');
  });

  it("another license's activation id -> 404 no_activation, and it stays active", async () => {
    const a = await activatedLicense();
    const b = await activatedLicense();
    expectError(
      await deactivate({ license_key: a.key, activation_id: b.activationId }),
      404,
      'no_activation',
    );
    expect((await activation(b.activationId)).status).toBe('active');
  });

  it('an activation id with a complete identity must match it', async () => {
    const { key, activationId } = await activatedLicense();
    const res = await deactivate({
      license_key: key,
      activation_id: activationId,
      ...identity('site.example'),
    });
    expectError(res, 404, 'no_activation');
    expect((await activation(activationId)).status).toBe('active');
  });

  it('an identity never activated on the license -> 404 no_activation', async () => {
    const { key } = await activatedLicense();
    expectError(await deactivate({ license_key: key, ...identity('never.example') }), 404, 'no_activation');
    expectError(await deactivate({ license_key: key, activation_id: 999999 }), 404, 'no_activation');
  });

  it('an unknown key -> 403 invalid_license', async () => {
    expectError(await deactivate({ license_key: 'UNKNOWN-KEY', activation_id: 1 }), 403, 'invalid_license');
  });

  it('a revoked license can still free its slots', async () => {
    const { key, license, activationId } = await activatedLicense();
    await t.app.inject({ method: 'DELETE', url: `/v1/licenses/${license.id}`, headers: t.adminAuth });
    expect((await deactivate({ license_key: key, activation_id: activationId })).statusCode).toBe(200);
  });

  describe('bad input: specific 400 codes, nothing deactivated', () => {
    let key: string;
    let activationId: number;
    let site: { domain: string; installation_id: string };
    beforeAll(async () => {
      ({ key, activationId, site } = await activatedLicense(5));
    });
    const cases: [string, () => unknown, string][] = [
      ['no body', () => undefined, 'missing_key'],
      ['license_key missing', () => ({ activation_id: activationId }), 'missing_key'],
      ['license_key empty', () => ({ license_key: '', activation_id: activationId }), 'missing_key'],
      [
        'license_key an array',
        () => ({ license_key: [key], activation_id: activationId }),
        'rest_invalid_param',
      ],
      ['neither id nor identity', () => ({ license_key: key }), 'missing_identifier'],
      ['domain only', () => ({ license_key: key, domain: site.domain }), 'missing_identifier'],
      [
        'installation_id only',
        () => ({ license_key: key, installation_id: site.installation_id }),
        'missing_identifier',
      ],
      [
        'domain empty with installation_id',
        () => ({ license_key: key, domain: '', installation_id: site.installation_id }),
        'missing_identifier',
      ],
      [
        'activation_id a string',
        () => ({ license_key: key, activation_id: String(activationId) }),
        'rest_invalid_param',
      ],
      ['activation_id zero', () => ({ license_key: key, activation_id: 0 }), 'rest_invalid_param'],
      ['activation_id fractional', () => ({ license_key: key, activation_id: 1.5 }), 'rest_invalid_param'],
      [
        'domain a number',
        () => ({ license_key: key, domain: 1, installation_id: site.installation_id }),
        'invalid_identity',
      ],
      [
        'domain 10 kB',
        () => ({ license_key: key, domain: 'x'.repeat(10_240), installation_id: site.installation_id }),
        'invalid_identity',
      ],
      [
        'domain with control characters',
        () => ({ license_key: key, domain: 'site.example\t', installation_id: site.installation_id }),
        'invalid_identity',
      ],
      [
        'installation_id malformed',
        () => ({ license_key: key, domain: site.domain, installation_id: 'nope' }),
        'invalid_identity',
      ],
      [
        'an unknown field',
        () => ({ license_key: key, activation_id: activationId, force: true }),
        'invalid_parameters',
      ],
    ];
    for (const [why, body, code] of cases) {
      it(`${why} -> 400 ${code}`, async () => {
        const payload = body();
        const res =
          payload === undefined
            ? await t.app.inject({ method: 'POST', url: '/v1/licenses/deactivate' })
            : await deactivate(payload);
        expectError(res, 400, code);
        expect((await activation(activationId)).status).toBe('active');
      });
    }
  });

  it('licensing switched off: 503 licensing_unavailable, nothing deactivated', async () => {
    const { key, activationId } = await activatedLicense();
    await setSettings(t, { licensing_enabled: false });
    try {
      expectError(
        await deactivate({ license_key: key, activation_id: activationId }),
        503,
        'licensing_unavailable',
      );
    } finally {
      await setSettings(t, { licensing_enabled: true });
    }
    expect((await activation(activationId)).status).toBe('active');
  });

  it('deactivation hooks run inside the transaction with the activation id', async () => {
    const seen: number[] = [];
    t.app.services.activations.onDeactivate(async (id, tx) => {
      // The hook sees the deactivation already written in its transaction.
      const row = await tx
        .selectFrom('activations')
        .select('status')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      expect(row.status).toBe('deactivated');
      seen.push(id);
    });
    const { key, activationId } = await activatedLicense();
    await deactivate({ license_key: key, activation_id: activationId });
    await deactivate({ license_key: key, activation_id: activationId });
    expect(seen).toEqual([activationId]);
  });
});
