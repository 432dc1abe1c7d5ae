import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { legacyIdentity, URL_ONLY_INSTALLATION } from '../../src/modules/identity/identity.js';
import { createTestApp, expectError, post, setSettings, type TestApp } from '../helpers/app.js';
import { identity, installationId, licenseFixture } from '../helpers/factories.js';

// URL-only activations (docs/migrating.md, 'Leaving the compatibility API'): a site moved from another store is
// known by its URL only; when it later activates with a full identity, its activation becomes that
// identity in place and keeps its seat.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
  await setSettings(t, { rate_limit: 100 });
});
afterAll(async () => t.close());

const db = () => t.app.services.database.db;
const activate = (payload: unknown) => post(t, '/licenses/activate', payload);
const rowsOf = (licenseId: number) =>
  db().selectFrom('activations').selectAll().where('license_id', '=', licenseId).orderBy('id').execute();

/** An activation as an import writes it: URL only, no installation id. */
async function legacyActivation(licenseId: number, url: string): Promise<number> {
  const site = legacyIdentity(url);
  const now = new Date().toISOString();
  const row = await db()
    .insertInto('activations')
    .values({
      license_id: licenseId,
      identity_key: site.identity_key,
      domain: site.domain,
      domain_normalized: site.domain_normalized,
      installation_id: site.installation_id,
      ip_address: '',
      machine_id: null,
      user_agent: '',
      activated_at: now,
      status: 'active',
      activation_revision: 1,
      updated_at: now,
      last_seen_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

describe('upgrade in place', () => {
  it('a full identity on the domain of a legacy activation takes it over: same row, one seat', async () => {
    const f = await licenseFixture(t, { activation_limit: 1 });
    const legacyId = await legacyActivation(f.license.id, 'https://shop.example.com/');
    const full = { domain: 'shop.example.com', installation_id: installationId() };

    const res = await activate({ license_key: f.key, ...full });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ success: true, activation_id: legacyId, activations_remaining: 0 });

    const rows = await rowsOf(f.license.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      id: legacyId,
      status: 'active',
      installation_id: full.installation_id,
      activation_revision: 2,
    });
    // The seat is the one the legacy activation held: no other site fits.
    expectError(
      await activate({ license_key: f.key, ...identity('other.example.com') }),
      403,
      'activation_limit_reached',
    );
    // The upgraded activation answers as any full identity does.
    const again = await activate({ license_key: f.key, ...full });
    expect(again.json()).toMatchObject({
      success: true,
      activation_id: legacyId,
      message: 'Already activated',
    });
  });

  it('parallel first activations from the upgraded site upgrade it once', async () => {
    const f = await licenseFixture(t, { activation_limit: 2 });
    const legacyId = await legacyActivation(f.license.id, 'blog.example.org');
    const a = { domain: 'blog.example.org', installation_id: installationId() };
    const b = { domain: 'blog.example.org', installation_id: installationId() };
    const [ra, rb] = await Promise.all([
      activate({ license_key: f.key, ...a }),
      activate({ license_key: f.key, ...b }),
    ]);
    expect([ra.statusCode, rb.statusCode]).toEqual([200, 200]);
    const ids = [ra.json().activation_id, rb.json().activation_id];
    // One of them took the legacy row; the other, a different installation, needed a seat of its own.
    expect(ids).toContain(legacyId);
    const active = (await rowsOf(f.license.id)).filter((r) => r.status === 'active');
    expect(active).toHaveLength(2);
    expect(active.filter((r) => r.installation_id === URL_ONLY_INSTALLATION)).toHaveLength(0);
  });

  it('a legacy activation on another domain is left alone', async () => {
    const f = await licenseFixture(t, { activation_limit: 2 });
    const legacyId = await legacyActivation(f.license.id, 'old.example.net');
    const res = await activate({ license_key: f.key, ...identity('new.example.net') });
    expect(res.statusCode).toBe(200);
    expect(res.json().activation_id).not.toBe(legacyId);
    const legacy = (await rowsOf(f.license.id)).find((r) => r.id === legacyId);
    expect(legacy).toMatchObject({ status: 'active', installation_id: URL_ONLY_INSTALLATION });
  });
});
