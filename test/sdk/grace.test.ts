import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FileReceiptStorage,
  type License,
  type ReceiptStorage,
  type StoredReceipt,
  Tollgate,
} from '../../sdk/js/src/index.js';
import { adminOk, setSettings, type TestApp } from '../helpers/app.js';
import {
  downloadDir,
  licensedProduct,
  licenseFor,
  listeningStore,
  movableClock,
  rejectsWith,
} from './helpers.js';

/**
 * validateWithGrace (docs/sdk-js.md): the last good receipt answers while the store cannot, until
 * its valid_until; a refusal is the store's answer and ends the grace.
 */
let t: TestApp;
let origin: string;
const clock = movableClock();
let client: Tollgate;
const dir = downloadDir();
beforeAll(async () => {
  ({ t, origin } = await listeningStore());
  clock.set(t.app.services.clock.now());
  client = new Tollgate({ url: origin, now: clock.now });
});
afterAll(async () => {
  await t.close();
  rmSync(dir.dir, { recursive: true, force: true });
});

/** A ReceiptStorage of the app's own: here an object in memory. */
class MemoryStorage implements ReceiptStorage {
  value: StoredReceipt | null = null;
  async load() {
    return this.value;
  }
  async save(value: StoredReceipt) {
    this.value = value;
  }
  async clear() {
    this.value = null;
  }
}

async function activated(domain = 'shop.example.com'): Promise<License> {
  const p = await licensedProduct(t);
  const license = licenseFor(p.key, domain);
  await client.activate(license);
  return license;
}

describe('validateWithGrace while the store answers', () => {
  it('answers from the store and keeps the verified receipt with the key list, in a file only its owner reads', async () => {
    const license = await activated();
    const storage = new FileReceiptStorage(dir.path('receipt.json'));
    const result = await client.validateWithGrace(license, storage);
    expect(result.source).toBe('store');
    if (result.source !== 'store') throw new Error('unreachable');
    expect(result.answer.valid).toBe(true);
    expect(result.claims?.installation_id).toBe(license.installation_id);
    const kept = await storage.load();
    expect(kept?.receipt).toEqual(result.answer.receipt);
    expect(kept?.keys.map((k) => k.id)).toContain(result.answer.receipt!.signing_key_id);
    expect(statSync(dir.path('receipt.json')).mode & 0o777).toBe(0o600);
    expect(readFileSync(dir.path('receipt.json'), 'utf8')).not.toContain(license.license_key);
    expect(dir.leftovers()).toEqual(['receipt.json']);
  });

  it('a refusal (403) is thrown as the store gave it and removes the kept receipt; a 400 keeps it', async () => {
    const p = await licensedProduct(t);
    const license = licenseFor(p.key);
    await client.activate(license);
    const storage = new MemoryStorage();
    await client.validateWithGrace(license, storage);
    expect(storage.value).not.toBeNull();
    await rejectsWith(
      client.validateWithGrace({ ...license, installation_id: 'not-a-uuid' }, storage),
      'invalid_identity',
      400,
    );
    expect(storage.value).not.toBeNull();
    await adminOk(t, 'DELETE', `/licenses/${p.licenseId}`);
    await rejectsWith(client.validateWithGrace(license, storage), 'revoked', 403);
    expect(storage.value).toBeNull();
  });

  it('a 5xx (licensing switched off) answers from the receipt', async () => {
    const license = await activated();
    const storage = new MemoryStorage();
    await client.validateWithGrace(license, storage);
    await setSettings(t, { licensing_enabled: false });
    try {
      const result = await client.validateWithGrace(license, storage);
      expect(result.source).toBe('receipt');
      if (result.source !== 'receipt') throw new Error('unreachable');
      expect({ code: result.error.code, status: result.error.status }).toEqual({
        code: 'licensing_unavailable',
        status: 503,
      });
      expect(result.claims.installation_id).toBe(license.installation_id);
      expect(result.valid_until).toBe(result.claims.valid_until);
      // Without a kept receipt the same outage fails closed.
      const none = await rejectsWith(
        client.validateWithGrace(license, new MemoryStorage()),
        'grace_unavailable',
        0,
      );
      expect((none.cause as { code: string }).code).toBe('licensing_unavailable');
    } finally {
      await setSettings(t, { licensing_enabled: true });
    }
  });

  it('a kept receipt of another site, tampered, or damaged on disk does not answer: grace_unavailable', async () => {
    const license = await activated();
    const storage = new MemoryStorage();
    await client.validateWithGrace(license, storage);
    const other = await activated('other.example.com');
    await setSettings(t, { licensing_enabled: false });
    try {
      const mismatch = await rejectsWith(client.validateWithGrace(other, storage), 'grace_unavailable', 0);
      expect((mismatch.cause as { code: string }).code).toBe('receipt_site_mismatch');
      const kept = storage.value!;
      const tampered = new MemoryStorage();
      tampered.value = { ...kept, receipt: { ...kept.receipt, payload: `${kept.receipt.payload}A` } };
      const forged = await rejectsWith(client.validateWithGrace(license, tampered), 'grace_unavailable', 0);
      expect((forged.cause as { code: string }).code).toBe('signature_invalid');
      writeFileSync(dir.path('damaged.json'), '{"receipt": {"payload": ');
      await rejectsWith(
        client.validateWithGrace(license, new FileReceiptStorage(dir.path('damaged.json'))),
        'grace_unavailable',
        0,
      );
    } finally {
      await setSettings(t, { licensing_enabled: true });
    }
  });
});

// Last: this stops the store's listener for good.
describe('validateWithGrace with the store stopped', () => {
  it('answers from the receipt until valid_until, then fails closed', async () => {
    const license = await activated();
    const storage = new FileReceiptStorage(dir.path('outage.json'));
    const up = await client.validateWithGrace(license, storage);
    if (up.source !== 'store' || !up.claims) throw new Error('expected a receipt from the store');
    const until = new Date(up.claims.valid_until).getTime();

    t.app.server.closeAllConnections();
    await new Promise<void>((resolve) => t.app.server.close(() => resolve()));
    await rejectsWith(client.validate(license), 'network_error', 0);

    const down = await client.validateWithGrace(license, storage);
    expect(down).toMatchObject({ valid: true, source: 'receipt', valid_until: up.claims.valid_until });
    clock.set(new Date(until - 1000));
    expect((await client.validateWithGrace(license, storage)).source).toBe('receipt');
    clock.set(new Date(until));
    const closed = await rejectsWith(client.validateWithGrace(license, storage), 'grace_unavailable', 0);
    expect((closed.cause as { code: string }).code).toBe('receipt_expired');
  });
});
