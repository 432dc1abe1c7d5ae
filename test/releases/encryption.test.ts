import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EncryptStream, encryptedSize } from '../../src/modules/releases/storage/crypto-stream.js';
import type { ArtifactRef } from '../../src/modules/releases/storage/driver.js';
import { EncryptedVaultDriver } from '../../src/modules/releases/storage/encrypted.js';
import { hashChunks, openVaultFile, readChunks } from '../../src/modules/releases/storage/local.js';
import { Vault } from '../../src/modules/releases/storage/vault.js';
import { Keyring, keyIdOf } from '../../src/modules/vault/keyring.js';
import {
  CHUNK_SIZE,
  HEADER_SIZE,
  makeHeader,
  parseHeader,
  RECORD_OVERHEAD,
} from '../../src/modules/vault/seal.js';
import { sha256 } from '../../src/random.js';

let dir: string;
let vault: Vault;
let driver: EncryptedVaultDriver;
const key = randomBytes(32);
let n = 0;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tollgate-enc-'));
  vault = new Vault(join(dir, 'vault'), [join(dir, 'public')]);
  driver = new EncryptedVaultDriver(vault, new Keyring(key, [], join(dir, 'vault.key')));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Seals `plain` into the vault and answers its reference and path. */
async function store(plain: Buffer): Promise<{ ref: ArtifactRef; path: string }> {
  n += 1;
  const storageKey = `0${n % 10}/${'00000000-0000-4000-8000-'}${String(n).padStart(12, '0')}.tgv`;
  const staged = await driver.put(Readable.from([plain]), storageKey);
  await staged.commit();
  return {
    ref: { storageKey, keyId: staged.keyId, fileSize: plain.length, sha256: sha256(plain) },
    path: vault.pathOf(storageKey),
  };
}

const RECORD = CHUNK_SIZE + RECORD_OVERHEAD;

/** How many of this process's descriptors are open on `path` (Linux /proc). */
function openDescriptors(path: string): number {
  let count = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) === path) count++;
    } catch {
      // closed between the listing and the look
    }
  }
  return count;
}

describe('local_encrypted: AES-256-GCM in 64 KiB authenticated chunks', () => {
  it.each([0, 1, CHUNK_SIZE - 1, CHUNK_SIZE, CHUNK_SIZE + 1, 3 * CHUNK_SIZE, 3 * CHUNK_SIZE + 17])(
    'round-trips %i bytes, verifies, and stores the documented size',
    async (size) => {
      const plain = randomBytes(size);
      const { ref, path } = await store(plain);
      expect(statSync(path).size).toBe(encryptedSize(size));
      expect((statSync(path).mode & 0o777).toString(8)).toBe('600');
      expect(await driver.verify(ref)).toMatchObject({ ok: true });
      const out = await hashChunks(await driver.open(ref));
      expect(out).toEqual({ size, sha256: sha256(plain) });
      // The plaintext is nowhere in the stored file.
      if (size >= 64) expect(readFileSync(path).includes(plain.subarray(0, 64))).toBe(false);
    },
  );

  it('a consumer that stops before, after or during reading leaves no file open (both drivers)', async () => {
    const plain = randomBytes(3 * CHUNK_SIZE + 5);
    const { ref, path } = await store(plain);
    const plainPath = join(dir, `plain-${n}.bin`);
    writeFileSync(plainPath, plain);
    const openers = [
      { path, open: () => driver.open(ref) },
      { path: plainPath, open: async () => readChunks(await openVaultFile(plainPath)) },
    ];
    for (const opener of openers) {
      const unread = await opener.open();
      expect(openDescriptors(opener.path)).toBe(1);
      await unread.return();
      expect(openDescriptors(opener.path)).toBe(0);
      const partly = await opener.open();
      expect((await partly.next()).done).toBe(false);
      await partly.return();
      expect(openDescriptors(opener.path)).toBe(0);
      const thrown = await opener.open();
      await expect(thrown.throw(new Error('consumer failed'))).rejects.toThrow('consumer failed');
      expect(openDescriptors(opener.path)).toBe(0);
      expect(await hashChunks(await opener.open())).toEqual({ size: plain.length, sha256: sha256(plain) });
      expect(openDescriptors(opener.path)).toBe(0);
    }
  });

  it('a flipped bit in any record is detected', async () => {
    const { ref, path } = await store(randomBytes(3 * CHUNK_SIZE + 100));
    const original = readFileSync(path);
    for (const offset of [HEADER_SIZE + 20, HEADER_SIZE + RECORD + 5000, original.length - 3, 5]) {
      const bytes = Buffer.from(original);
      bytes[offset]! ^= 0x01;
      writeFileSync(path, bytes);
      expect(await driver.verify(ref)).toEqual({ ok: false, reason: 'authentication_failed' });
      await expect(hashChunks(await driver.open(ref))).rejects.toThrow(/integrity/);
    }
  });

  it('truncation at a record boundary, mid-record, and to the header alone is detected', async () => {
    const plain = randomBytes(3 * CHUNK_SIZE + 100);
    const { ref, path } = await store(plain);
    const original = readFileSync(path);
    const unsized = { ...ref, fileSize: null };
    for (const length of [HEADER_SIZE + 2 * RECORD, HEADER_SIZE + RECORD + 10, HEADER_SIZE, 10]) {
      writeFileSync(path, original.subarray(0, length));
      expect((await driver.verify(ref)).ok).toBe(false);
      // Even without the size check, authentication alone catches it.
      expect(await driver.verify(unsized)).toEqual({ ok: false, reason: 'authentication_failed' });
    }
  });

  it('two swapped records are detected', async () => {
    const { ref, path } = await store(randomBytes(3 * CHUNK_SIZE + 100));
    const b = readFileSync(path);
    const r0 = b.subarray(HEADER_SIZE, HEADER_SIZE + RECORD);
    const r1 = b.subarray(HEADER_SIZE + RECORD, HEADER_SIZE + 2 * RECORD);
    const swapped = Buffer.concat([b.subarray(0, HEADER_SIZE), r1, r0, b.subarray(HEADER_SIZE + 2 * RECORD)]);
    expect(swapped.length).toBe(b.length);
    writeFileSync(path, swapped);
    expect(await driver.verify(ref)).toEqual({ ok: false, reason: 'authentication_failed' });
  });

  it('appended bytes and a record from another file are detected', async () => {
    const a = await store(randomBytes(2 * CHUNK_SIZE + 10));
    const b = await store(randomBytes(2 * CHUNK_SIZE + 10));
    const fa = readFileSync(a.path);
    const fb = readFileSync(b.path);
    writeFileSync(a.path, Buffer.concat([fa, fa.subarray(HEADER_SIZE, HEADER_SIZE + RECORD)]));
    expect(await driver.verify({ ...a.ref, fileSize: null })).toEqual({
      ok: false,
      reason: 'authentication_failed',
    });
    // Same key, same index, other file: the file id in the header is in every record's AAD.
    const spliced = Buffer.concat([
      fa.subarray(0, HEADER_SIZE),
      fb.subarray(HEADER_SIZE, HEADER_SIZE + RECORD),
      fa.subarray(HEADER_SIZE + RECORD),
    ]);
    writeFileSync(a.path, spliced);
    expect(await driver.verify(a.ref)).toEqual({ ok: false, reason: 'authentication_failed' });
  });

  it('a file sealed with a key the keyring lacks is reported, not misread', async () => {
    const other = new EncryptedVaultDriver(vault, new Keyring(randomBytes(32), [], join(dir, 'other.key')));
    const { ref } = await store(randomBytes(1000));
    expect(await other.verify(ref)).toEqual({ ok: false, reason: 'key_unavailable' });
  });

  it('decrypts in bounded memory: a 64 MiB artifact verifies without holding it', async () => {
    const size = 64 * 1024 * 1024;
    n += 1;
    const storageKey = `ff/00000000-0000-4000-8000-${String(n).padStart(12, '0')}.tgv`;
    const block = randomBytes(1024 * 1024);
    const source = Readable.from(
      (function* () {
        for (let i = 0; i < size / block.length; i++) yield block;
      })(),
    );
    const staged = await driver.put(source, storageKey);
    await staged.commit();
    const expected = await hashChunks(
      Readable.from(
        (function* () {
          for (let i = 0; i < size / block.length; i++) yield block;
        })(),
      ),
    );
    const before = process.memoryUsage().rss;
    const result = await driver.verify({
      storageKey,
      keyId: staged.keyId,
      fileSize: size,
      sha256: expected.sha256,
    });
    expect(result.ok).toBe(true);
    expect(process.memoryUsage().rss - before).toBeLessThan(48 * 1024 * 1024);
  });

  it('key ids are stable and the header names the sealing key', async () => {
    const header = makeHeader(keyIdOf(key));
    expect(header.subarray(12, 20).toString('hex')).toBe(keyIdOf(key));
    expect(keyIdOf(key)).toMatch(/^[0-9a-f]{16}$/);
    // The same key bytes give the same id; another key, another id.
    expect(keyIdOf(Buffer.from(key))).toBe(keyIdOf(key));
    expect(keyIdOf(randomBytes(32))).not.toBe(keyIdOf(key));
    // What the stream seals starts with that header, so the file names the key that sealed it.
    const sealed = Buffer.concat(
      await Readable.from([randomBytes(100)])
        .pipe(new EncryptStream(key, header))
        .toArray(),
    );
    expect(sealed.subarray(0, HEADER_SIZE).equals(header)).toBe(true);
    expect(parseHeader(sealed)).toEqual({ chunkSize: CHUNK_SIZE, keyId: keyIdOf(key) });
    // And so does a file the driver stores.
    const { ref, path } = await store(randomBytes(100));
    expect(ref.keyId).toBe(keyIdOf(key));
    expect(parseHeader(readFileSync(path))?.keyId).toBe(keyIdOf(key));
  });
});

describe('the generated key file, shared by server processes', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const freshFile = () => {
    const d = mkdtempSync(join(tmpdir(), 'tollgate-keyring-'));
    dirs.push(d);
    return join(d, 'data', 'vault.key');
  };

  it('four processes generating it at once, 60 times: each time all use the one key written, whole', async () => {
    // Before the key file was linked into place whole, about one round in twenty had a process
    // read the winner's file before its key was written in (an error, then a 500 on every request).
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-keyring-race-'));
    dirs.push(dir);
    const rounds = 60;
    const t0 = Date.now() + 4000; // after the four have started
    const run = () =>
      new Promise<string[]>((resolve, reject) => {
        execFile(
          process.execPath,
          ['--import', 'tsx', 'test/helpers/keyring-race.ts', dir, String(t0), String(rounds)],
          (error, stdout) => (error ? reject(error) : resolve(JSON.parse(stdout) as string[])),
        );
      });
    const outs = await Promise.all([run(), run(), run(), run()]);
    for (let round = 0; round < rounds; round++) {
      const written = Buffer.from(
        readFileSync(join(dir, String(round), 'vault.key'), 'utf8').trim(),
        'base64',
      );
      expect(outs.map((ids) => ids[round])).toEqual(Array(4).fill(keyIdOf(written)));
      expect(readdirSync(join(dir, String(round)))).toEqual(['vault.key']);
    }
  }, 30_000);

  it('a keyring that found no key file reads the key another process generated later', async () => {
    const file = freshFile();
    const early = new Keyring(null, [], file);
    expect((await early.status(false)).source).toBe('not_generated');
    const { keyId } = await new Keyring(null, [], file).currentKey();
    await early.load();
    expect(early.get(keyId)).not.toBeNull();
    expect((await early.currentKey()).keyId).toBe(keyId);
  });
});
