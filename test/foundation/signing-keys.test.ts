import { createPrivateKey, createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { type Database, openDatabase } from '../../src/db/database.js';
import type { AuditService } from '../../src/modules/audit/audit.service.js';
import { createSigning, type SigningService } from '../../src/modules/signing/signing.module.js';
import { keyIdOf } from '../../src/modules/signing/signing.service.js';
import { keyIdOf as vaultKeyIdOf } from '../../src/modules/vault/keyring.js';
import { openBytes, sealBytes } from '../../src/modules/vault/seal.js';
import { createVault } from '../../src/modules/vault/vault.module.js';
import { admin, adminOk, createTestApp, expectError, post, type TestApp } from '../helpers/app.js';
import { dialectUnderTest, freshDatabase, type TestDatabase } from '../helpers/db.js';
import { createCustomer, identity, licenseFixture } from '../helpers/factories.js';
import { sleep } from '../helpers/wait.js';

/**
 * The signing keys (docs/administration.md, 'Signing keys'): stored in the database with the
 * private half sealed by the vault key, listed without it, rotated by an administrator, and the
 * first one made once however many processes ask for it at once.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

interface PublicKey {
  id: string;
  public_key: string;
  created_at: string;
  retired_at: string | null;
}

const db = () => t.app.services.database.db;
const publicList = () => t.app.inject({ method: 'GET', url: '/v1/software/signing-keys' });
const rows = () => db().selectFrom('signing_keys').selectAll().orderBy('id').execute();

/** The vault a server process on this DATA_DIR seals with (the same vault key file). */
const vaultOf = (app: TestApp) =>
  createVault({ database: app.app.services.database, config: app.config, audit: noAudit }).vault;

/** The generated vault key of a test app's DATA_DIR (no VAULT_KEY is set in tests). */
const vaultKey = (app: TestApp) =>
  Buffer.from(readFileSync(join(app.config.dataDir, 'vault.key'), 'utf8').trim(), 'base64');

const noAudit = { record: async () => {} } as unknown as AuditService;

describe('signing key routes', () => {
  it('no key exists before one is needed: both lists are empty, and listing creates none', async () => {
    expect((await publicList()).json()).toEqual({ keys: [] });
    expect(await adminOk(t, 'GET', '/signing-keys')).toEqual({ keys: [] });
    expect(await rows()).toEqual([]);
  });

  it('administrator routes: 401 anonymous, 403 to a customer, before the input is read', async () => {
    expectError(await t.app.inject({ method: 'GET', url: '/v1/signing-keys' }), 401, 'rest_not_logged_in');
    expectError(
      await t.app.inject({ method: 'POST', url: '/v1/signing-keys/rotate', payload: { junk: 1 } }),
      401,
      'rest_not_logged_in',
    );
    const customer = await createCustomer(t);
    expectError(
      await t.app.inject({ method: 'GET', url: '/v1/signing-keys', headers: customer.headers }),
      403,
      'rest_forbidden',
    );
    expectError(
      await t.app.inject({
        method: 'POST',
        url: '/v1/signing-keys/rotate',
        headers: customer.headers,
        payload: {},
      }),
      403,
      'rest_forbidden',
    );
    expect(await rows()).toEqual([]);
  });

  it('unknown fields, wrong bodies and hostile strings: a specific 400, and nothing changes', async () => {
    expectError(await admin(t, 'POST', '/signing-keys/rotate', { force: true }), 400, 'invalid_parameters');
    expectError(
      await admin(t, 'POST', '/signing-keys/rotate', { "'; DROP TABLE signing_keys; --": 1 }),
      400,
      'invalid_parameters',
    );
    const malformed = await t.app.inject({
      method: 'POST',
      url: '/v1/signing-keys/rotate',
      headers: { ...t.adminAuth, 'content-type': 'application/json' },
      payload: '{"force":',
    });
    expectError(malformed, 400, 'rest_invalid_json');
    const array = await t.app.inject({
      method: 'POST',
      url: '/v1/signing-keys/rotate',
      headers: { ...t.adminAuth, 'content-type': 'application/json' },
      payload: '[]',
    });
    expectError(array, 400, 'rest_invalid_param');
    expectError(
      await t.app.inject({ method: 'GET', url: '/v1/software/signing-keys?id=%3Cscript%3E' }),
      400,
      'invalid_parameters',
    );
    expectError(await admin(t, 'GET', '/signing-keys?page=2'), 400, 'invalid_parameters');
    expect(await rows()).toEqual([]);
  });

  it('rotate makes the first key when there is none, and records it in the audit trail', async () => {
    const { keys } = await adminOk<{ keys: PublicKey[] }>(t, 'POST', '/signing-keys/rotate', {});
    expect(keys).toHaveLength(1);
    const [key] = keys;
    expect(key!.retired_at).toBeNull();
    expect(key!.id).toBe(keyIdOf(Buffer.from(key!.public_key, 'base64')));
    expect(key!.id).toMatch(/^k1-[0-9a-f]{8}$/);
    const events = await adminOk<Record<string, unknown>[]>(
      t,
      'GET',
      '/audit-events?entity_type=signing_key',
    );
    expect(events[0]).toMatchObject({
      entity_type: 'signing_key',
      entity_id: 0,
      action: 'rotate',
      changes: { active_key_id: { before: null, after: key!.id } },
    });
  });

  it('a rotation retires the active key (listed, without its private half) and makes a new one', async () => {
    const before = (await publicList()).json() as { keys: PublicKey[] };
    const old = before.keys.find((k) => k.retired_at === null)!;
    const { keys } = await adminOk<{ keys: PublicKey[] }>(t, 'POST', '/signing-keys/rotate');
    expect(keys).toHaveLength(before.keys.length + 1);
    expect(keys.filter((k) => k.retired_at === null)).toHaveLength(1);
    expect(keys[0]!.retired_at).toBeNull();
    expect(keys.find((k) => k.id === old.id)!.retired_at).not.toBeNull();
    expect((await publicList()).json()).toEqual({ keys });
    const stored = await rows();
    expect(stored.find((r) => r.key_id === old.id)!.private_key).toBeNull();
    const events = await adminOk<Record<string, unknown>[]>(
      t,
      'GET',
      '/audit-events?entity_type=signing_key',
    );
    expect(events[0]).toMatchObject({ changes: { active_key_id: { before: old.id, after: keys[0]!.id } } });
  });

  it('rotations at once all happen, one after the other: one active key at the end', async () => {
    const before = (await rows()).length;
    const answers = await Promise.all(
      Array.from({ length: 3 }, () => admin(t, 'POST', '/signing-keys/rotate', {})),
    );
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200]);
    const stored = await rows();
    expect(stored).toHaveLength(before + 3);
    expect(stored.filter((r) => r.retired_at === null)).toHaveLength(1);
    expect(stored.filter((r) => r.private_key !== null)).toHaveLength(1);
  });

  it('the private half is stored sealed with the vault key, never in plaintext, and in no answer', async () => {
    const [row] = (await rows()).filter((r) => r.retired_at === null);
    const sealed = Buffer.from(row!.private_key!, 'base64');
    // The encrypted vault's format (docs/releases.md): magic, header, one record of a 32-byte seed.
    expect(sealed.subarray(0, 4).toString('ascii')).toBe('TGVE');
    expect(sealed).toHaveLength(36 + 12 + 32 + 16);
    const key = vaultKey(t);
    const seed = openBytes(sealed, (id) => (id === vaultKeyIdOf(key) ? key : null));
    expect(seed).toHaveLength(32);
    expect(sealed.includes(seed)).toBe(false);
    expect(row!.private_key!.includes(seed.toString('base64').slice(0, 20))).toBe(false);
    // The seed is the private half of the listed public key.
    const privateKey = createPrivateKey({
      key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]),
      format: 'der',
      type: 'pkcs8',
    });
    const raw = createPublicKey(privateKey).export({ format: 'der', type: 'spki' }).subarray(12);
    expect(raw.toString('base64')).toBe(row!.public_key);
    // No answer carries it, in any encoding.
    const answers = [
      (await publicList()).body,
      (await admin(t, 'GET', '/signing-keys')).body,
      (await admin(t, 'POST', '/signing-keys/rotate', {})).body,
      (await admin(t, 'GET', '/audit-events?entity_type=signing_key')).body,
    ].join('\n');
    for (const encoding of ['base64', 'base64url', 'hex'] as const) {
      expect(answers).not.toContain(seed.toString(encoding));
    }
    expect(answers).not.toContain(row!.private_key!);
    expect(answers).not.toContain('private');
  });
});

describe('the first key, made once by processes that need it at once', () => {
  let shared: TestDatabase;
  const extra: Database[] = [];
  beforeAll(async () => {
    shared = await freshDatabase();
  });
  afterAll(async () => {
    for (const d of extra) await d.close();
    await shared.drop();
  });

  let sealed = 0;
  /**
   * A signing module on its own connection (pool) to the shared database: a process of its own.
   * Sealing a new key waits a little, so that every signer has read "no key yet" before any
   * inserts one: the race is certain, not left to timing.
   */
  function signer(): SigningService {
    const database = openDatabase(shared.config);
    extra.push(database);
    const storage = vaultOf(t);
    const vault = {
      sealSecret: async (plain: Buffer) => {
        sealed++;
        await sleep(100);
        return storage.sealSecret(plain);
      },
      openSecret: (s: Buffer) => storage.openSecret(s),
    };
    return createSigning({ database, clock: systemClock, vault, audit: noAudit }).signing;
  }

  it(`two (${dialectUnderTest}) signers creating the first key at once end with one active key`, async () => {
    const [a, b] = [signer(), signer()];
    const data = Buffer.from('the same bytes');
    const signed = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).sign(data)));
    // Both made a key (one a process: concurrent calls of one process share its load) ...
    expect(sealed).toBe(2);
    // ... and one was stored: the loser of the insert took the winner's.
    const stored = await shared.database.db.selectFrom('signing_keys').selectAll().execute();
    expect(stored).toHaveLength(1);
    expect(stored[0]!.retired_at).toBeNull();
    expect(new Set(signed.map((s) => s.keyId))).toEqual(new Set([stored[0]!.key_id]));
    const publicKey = createPublicKey({
      key: Buffer.concat([
        Buffer.from('302a300506032b6570032100', 'hex'),
        Buffer.from(stored[0]!.public_key, 'base64'),
      ]),
      format: 'der',
      type: 'spki',
    });
    expect(signed.every((s) => verify(null, data, publicKey, s.signature))).toBe(true);
  });

  it('a third process reads the key the first two made', async () => {
    const { keyId } = await signer().sign(Buffer.from('x'));
    const stored = await shared.database.db.selectFrom('signing_keys').select('key_id').execute();
    expect(stored.map((r) => r.key_id)).toEqual([keyId]);
  });
});

describe('an active key that cannot be opened: 500 signing_key_unavailable, and validate without a receipt still answers', () => {
  let u: TestApp;
  beforeAll(async () => {
    u = await createTestApp();
  });
  afterAll(async () => u.close());

  async function activated() {
    const f = await licenseFixture(u, { activation_limit: 3 });
    const site = identity('unavailable.example');
    expect((await post(u, '/licenses/activate', { license_key: f.key, ...site })).statusCode).toBe(200);
    return { license_key: f.key, ...site };
  }

  it('sealed with a vault key this server does not have, or belonging to another key', async () => {
    const body = await activated();
    const pair = generateKeyPairSync('ed25519');
    const raw = pair.publicKey.export({ format: 'der', type: 'spki' }).subarray(12);
    const seed = pair.privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(16);
    const foreign = Buffer.alloc(32, 7);
    const other = generateKeyPairSync('ed25519')
      .privateKey.export({ format: 'der', type: 'pkcs8' })
      .subarray(16);
    const storage = vaultOf(u);
    const cases = [
      // sealed with a vault key that is not configured here
      sealBytes(foreign, vaultKeyIdOf(foreign), seed).toString('base64'),
      // sealed with the right vault key, but the private half of another key
      (await storage.sealSecret(other)).toString('base64'),
      // not a sealed value at all
      Buffer.from('not sealed').toString('base64'),
    ];
    for (const [i, privateKey] of cases.entries()) {
      const signing = createSigning({
        database: u.app.services.database,
        clock: systemClock,
        vault: storage,
        audit: noAudit,
      }).signing;
      await u.app.services.database.db.deleteFrom('signing_keys').execute();
      await u.app.services.database.db
        .insertInto('signing_keys')
        .values({
          key_id: `k1-0000000${i}`,
          algorithm: 'ed25519',
          public_key: raw.toString('base64'),
          private_key: privateKey,
          created_at: new Date().toISOString(),
          retired_at: null,
        })
        .execute();
      await expect(signing.sign(Buffer.from('x'))).rejects.toMatchObject({ code: 'signing_key_unavailable' });
    }
    // Through the route, on the app's own (never loaded) signing service.
    const res = await post(u, '/licenses/validate', { ...body, receipt: true });
    expectError(res, 500, 'signing_key_unavailable');
    expect(res.body).not.toContain(raw.toString('base64'));
    expect((await post(u, '/licenses/validate', body)).statusCode).toBe(200);
  });
});

describe('no key material in the logs', () => {
  let v: TestApp;
  beforeAll(async () => {
    v = await createTestApp({ captureLogs: true, env: { LOG_LEVEL: 'trace' } });
  });
  afterAll(async () => v.close());

  it('a receipt, a rotation and another receipt at trace level: no private half, no license key in any line', async () => {
    const f = await licenseFixture(v, { activation_limit: 3 });
    const site = identity('logs.example');
    expect((await post(v, '/licenses/activate', { license_key: f.key, ...site })).statusCode).toBe(200);
    const body = { license_key: f.key, ...site, receipt: true };
    expect((await post(v, '/licenses/validate', body)).statusCode).toBe(200);
    const first = (await v.app.services.database.db.selectFrom('signing_keys').selectAll().execute())[0]!;
    expect((await admin(v, 'POST', '/signing-keys/rotate', {})).statusCode).toBe(200);
    expect((await post(v, '/licenses/validate', body)).statusCode).toBe(200);
    const stored = await v.app.services.database.db.selectFrom('signing_keys').selectAll().execute();
    const key = vaultKey(v);
    const seeds = [first, ...stored]
      .filter((r) => r.private_key !== null)
      .map((r) => openBytes(Buffer.from(r.private_key!, 'base64'), () => key));
    expect(seeds.length).toBeGreaterThanOrEqual(2);
    const logs = v.logs();
    expect(logs.length).toBeGreaterThan(0);
    for (const seed of seeds) {
      for (const encoding of ['base64', 'base64url', 'hex'] as const) {
        expect(logs).not.toContain(seed.toString(encoding));
      }
    }
    expect(logs).not.toContain(first.private_key!);
    expect(logs).not.toContain(f.key);
  });
});
