import { execFileSync, spawn } from 'node:child_process';
import { createHash, createPublicKey, verify } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { adminOk, createTestApp, expectError, postForm, type TestApp } from '../helpers/app.js';
import { makeZip, publish, softwareProduct, uploadRelease } from '../helpers/factories.js';
import { startServer } from '../helpers/server.js';
import { snapshot } from './helpers.js';

/**
 * Signed releases (docs/releases.md, 'Signatures and Content-MD5'): every artifact stored in the
 * vault is signed with the store's Ed25519 key over the SHA-384 of its bytes, as WordPress core's
 * verify_file_signature() checks, and its MD5 is stored; artifacts stored before that are signed
 * by the data step run after the migrations.
 */

interface PublicKey {
  id: string;
  public_key: string;
  created_at: string;
  retired_at: string | null;
}
interface SignedRelease {
  version_id: number;
  artifact_id: number;
  status: string;
  storage_driver: string;
  signature: string | null;
  signing_key_id: string | null;
  signed_at: string | null;
  [k: string]: unknown;
}

const SIGNATURE = /^[A-Za-z0-9+/]{86}==$/;
const KEY_ID = /^k1-[0-9a-f]{8}$/;
const TIME = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/;

const sha384 = (b: Buffer) => createHash('sha384').update(b).digest();
const md5 = (b: Buffer) => createHash('md5').update(b).digest('base64');

async function publicKeys(t: TestApp): Promise<PublicKey[]> {
  const res = await t.app.inject({ method: 'GET', url: '/v1/software/signing-keys' });
  expect(res.statusCode).toBe(200);
  return (res.json() as { keys: PublicKey[] }).keys;
}

/** Verification written here independently of the server: Ed25519 over the raw SHA-384. */
function verifies(bytes: Buffer, signature: string, keyId: string, keys: PublicKey[]): boolean {
  const key = keys.find((k) => k.id === keyId);
  if (!key) return false;
  const publicKey = createPublicKey({
    key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(key.public_key, 'base64').toString('base64url') },
    format: 'jwk',
  });
  return verify(null, sha384(bytes), publicKey, Buffer.from(signature, 'base64'));
}

/** One byte of a copy changed. */
function tampered(bytes: Buffer, at = Math.floor(bytes.length / 2)): Buffer {
  const copy = Buffer.from(bytes);
  copy[at] = copy[at]! ^ 0x01;
  return copy;
}

/** The administrator's view of a product's releases. */
async function releasesOf(t: TestApp, productId: number): Promise<SignedRelease[]> {
  return (await adminOk<{ releases: SignedRelease[] }>(t, 'GET', `/software/products/${productId}/versions`))
    .releases;
}

const artifactRow = (t: TestApp, id: number) =>
  t.app.services.database.db
    .selectFrom('artifacts')
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirstOrThrow();

/** A fenced code block of docs/distribution.md, 'Verifying a release': the tests run what the docs show. */
function docsBlock(language: 'js' | 'php'): string {
  const text = readFileSync(new URL('../../docs/distribution.md', import.meta.url), 'utf8');
  const section = text.slice(text.indexOf('### Verifying a release'));
  const m = new RegExp(`\`\`\`${language}\n([\\s\\S]*?)\`\`\``).exec(section);
  if (!m) throw new Error(`docs/distribution.md has no ${language} block under 'Verifying a release'`);
  return m[1]!;
}

let php: string | null = null;
try {
  php = execFileSync('sh', ['-c', 'command -v php'], { encoding: 'utf8' }).trim() || null;
} catch {
  php = null;
}
const hasSodium =
  php !== null &&
  execFileSync(php, ['-r', 'echo function_exists("sodium_crypto_sign_verify_detached") ? "yes" : "no";'], {
    encoding: 'utf8',
  }) === 'yes';
// CI installs php-cli (.ci/run): there a missing PHP is a failure, not a skip.
const phpReason = 'php with sodium is not on PATH (apt-get install php-cli)';
const runPhp = hasSodium || process.env.CI ? it : it.skip;

describe('signing at upload', () => {
  let t: TestApp;
  /** The bytes of every release uploaded here, by version_id: what each signature must cover. */
  const uploaded = new Map<number, Buffer>();
  const upload = async (productId: number, version: string, extra: [string, string][] = []) => {
    const zip = makeZip(3000 + uploaded.size);
    const r = (await publish(t, productId, version, extra, zip)) as unknown as SignedRelease;
    uploaded.set(r.version_id, zip);
    return { release: r, zip };
  };

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it('an upload is signed over the SHA-384 of its bytes with the active key, and its MD5 is stored', async () => {
    const product = await softwareProduct(t);
    const { release, zip } = await upload(product.id, '1.0.0');
    expect(release.signature).toMatch(SIGNATURE);
    expect(release.signing_key_id).toMatch(KEY_ID);
    expect(release.signed_at).toMatch(TIME);
    const keys = await publicKeys(t);
    expect(keys.find((k) => k.id === release.signing_key_id)?.retired_at).toBeNull();
    expect(verifies(zip, release.signature!, release.signing_key_id!, keys)).toBe(true);
    // A changed byte anywhere, or the signature over the whole file rather than its digest, fails.
    expect(verifies(tampered(zip), release.signature!, release.signing_key_id!, keys)).toBe(false);
    expect(verifies(tampered(zip, zip.length - 1), release.signature!, release.signing_key_id!, keys)).toBe(
      false,
    );
    const row = await artifactRow(t, release.artifact_id);
    expect(row).toMatchObject({
      file_md5: md5(zip),
      signature: release.signature,
      signing_key_id: release.signing_key_id,
    });
    // The administrator's view answers the stored values.
    const [viewed] = await releasesOf(t, product.id);
    expect(viewed).toMatchObject({
      signature: release.signature,
      signing_key_id: release.signing_key_id,
      signed_at: release.signed_at,
    });
  });

  it('the private key is stored sealed with the vault key, whose generated file is owner-only', async () => {
    // docs/administration.md, 'Signing keys': never in plain text anywhere readable by others.
    const rows = await t.app.services.database.db.selectFrom('signing_keys').selectAll().execute();
    expect(rows).toHaveLength(1);
    const sealed = Buffer.from(rows[0]!.private_key!, 'base64');
    // A raw seed is 32 bytes; the sealed record carries a header, a nonce and a tag besides.
    expect(sealed.length).toBeGreaterThan(32 + 28);
    expect(statSync(join(t.config.dataDir, 'vault.key')).mode & 0o777).toBe(0o600);
    expect(statSync(t.config.dataDir).mode & 0o077).toBe(0);
  });

  it('an encrypted upload is signed over its plain bytes, not the ciphertext', async () => {
    const product = await softwareProduct(t, { storage_driver: 'local_encrypted' });
    const { release, zip } = await upload(product.id, '2.0.0');
    expect(release.storage_driver).toBe('local_encrypted');
    expect(verifies(zip, release.signature!, release.signing_key_id!, await publicKeys(t))).toBe(true);
    expect((await artifactRow(t, release.artifact_id)).file_md5).toBe(md5(zip));
  });

  it('a draft is signed too; withdrawing and republishing keep the signature', async () => {
    const product = await softwareProduct(t);
    const { release } = await upload(product.id, '1.0.0', [['status', 'draft']]);
    expect(release.status).toBe('draft');
    expect(release.signature).toMatch(SIGNATURE);
    const base = `/software/products/${product.id}/versions/${release.version_id}`;
    const published = await adminOk<SignedRelease>(t, 'POST', `${base}/republish`, {});
    const withdrawn = await adminOk<SignedRelease>(t, 'POST', `${base}/withdraw`);
    const again = await adminOk<SignedRelease>(t, 'POST', `${base}/republish`, {});
    for (const r of [published, withdrawn, again]) {
      expect(r).toMatchObject({
        signature: release.signature,
        signing_key_id: release.signing_key_id,
        signed_at: release.signed_at,
      });
    }
    expect(again.status).toBe('published');
  });

  it('an external release is never signed: the store never reads its bytes', async () => {
    const product = await softwareProduct(t);
    const r = await adminOk<SignedRelease>(t, 'POST', `/software/products/${product.id}/versions`, {
      version: '3.0.0',
      external_url: 'https://downloads.example.com/p-3.0.0.zip',
      file_sha256: 'a'.repeat(64),
    });
    expect(r).toMatchObject({ signature: null, signing_key_id: null, signed_at: null });
    expect(await artifactRow(t, r.artifact_id)).toMatchObject({
      file_md5: null,
      signature: null,
      signing_key_id: null,
      signed_at: null,
    });
  });

  it('a catalogue file copied into the vault by protect is signed like an upload', async () => {
    const product = await softwareProduct(t);
    const zip = makeZip(2500);
    const added = await postForm(t, `/v1/products/${product.id}/downloads`, [
      ['file', { filename: 'legacy.zip', content: zip }],
    ]);
    expect(added.statusCode).toBe(201);
    const protectedCopy = await t.app.inject({
      method: 'POST',
      url: `/v1/software/products/${product.id}/artifacts/protect`,
      headers: t.adminAuth,
      payload: { download_id: added.json().download_id },
    });
    expect(protectedCopy.statusCode).toBe(201);
    const row = await artifactRow(t, protectedCopy.json().artifact_id);
    expect(row.file_md5).toBe(md5(zip));
    expect(verifies(zip, row.signature!, row.signing_key_id!, await publicKeys(t))).toBe(true);
  });

  it('rotation: later uploads use the new key, and an older release still verifies with the retired one', async () => {
    const product = await softwareProduct(t);
    const older = await upload(product.id, '1.0.0');
    const rotated = await adminOk<{ keys: PublicKey[] }>(t, 'POST', '/signing-keys/rotate', {});
    const newer = await upload(product.id, '1.1.0');
    expect(newer.release.signing_key_id).not.toBe(older.release.signing_key_id);
    expect(rotated.keys[0]!.id).toBe(newer.release.signing_key_id);
    const keys = await publicKeys(t);
    const retired = keys.find((k) => k.id === older.release.signing_key_id);
    expect(retired?.retired_at).toMatch(/^\d{4}-/);
    expect(verifies(older.zip, older.release.signature!, retired!.id, keys)).toBe(true);
    expect(verifies(newer.zip, newer.release.signature!, newer.release.signing_key_id!, keys)).toBe(true);
    // Each key verifies only what it signed.
    expect(verifies(older.zip, older.release.signature!, newer.release.signing_key_id!, keys)).toBe(false);
    // The older release's answer is unchanged: it is not re-signed.
    const view = (await releasesOf(t, product.id)).find((r) => r.version_id === older.release.version_id)!;
    expect(view.signature).toBe(older.release.signature);
  });

  /** Every published release in the database with a stored file, as the administrator sees it. */
  async function everyPublished(): Promise<SignedRelease[]> {
    const products = await t.app.services.database.db
      .selectFrom('releases')
      .select('product_id')
      .distinct()
      .execute();
    const all: SignedRelease[] = [];
    for (const p of products) all.push(...(await releasesOf(t, p.product_id)));
    const published = all.filter((r) => r.status === 'published' && r.storage_driver !== 'external');
    expect(published.length).toBeGreaterThanOrEqual(5);
    return published;
  }

  it("every published release verifies with the published public key (Node.js, the docs' code)", async () => {
    const keys = await publicKeys(t);
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-verify-'));
    try {
      const file = join(dir, 'verify.mjs');
      writeFileSync(file, `${docsBlock('js')}\nexport { verifyRelease };\n`);
      const { verifyRelease } = (await import(pathToFileURL(file).href)) as {
        verifyRelease: (bytes: Buffer, signature: unknown, keyId: unknown, keys: PublicKey[]) => boolean;
      };
      for (const r of await everyPublished()) {
        const bytes = uploaded.get(r.version_id);
        expect(bytes, `the bytes of release ${r.version_id}`).toBeDefined();
        expect(verifyRelease(bytes!, r.signature, r.signing_key_id, keys)).toBe(true);
        expect(verifyRelease(tampered(bytes!), r.signature, r.signing_key_id, keys)).toBe(false);
        expect(verifyRelease(bytes!, r.signature, 'k1-00000000', keys)).toBe(false);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  runPhp(
    `every published release verifies with PHP's sodium (the docs' code)${hasSodium ? '' : ` (skipped: ${phpReason})`}`,
    async () => {
      expect(hasSodium, phpReason).toBe(true);
      const keys = await publicKeys(t);
      const dir = mkdtempSync(join(tmpdir(), 'tollgate-verify-php-'));
      try {
        const cases: { file: string; signature: string | null; signing_key_id: string | null }[] = [];
        const expected: string[] = [];
        for (const r of await everyPublished()) {
          const bytes = uploaded.get(r.version_id)!;
          const good = join(dir, `${r.version_id}.zip`);
          const bad = join(dir, `${r.version_id}-changed.zip`);
          writeFileSync(good, bytes);
          writeFileSync(bad, tampered(bytes));
          cases.push({ file: good, signature: r.signature, signing_key_id: r.signing_key_id });
          cases.push({ file: bad, signature: r.signature, signing_key_id: r.signing_key_id });
          expected.push('valid', 'refused');
        }
        // The docs' function, with its inputs in the environment so that no value is quoted into code.
        const code = `${docsBlock('php')}
          $keys = json_decode(getenv('KEYS'), true);
          $out = [];
          foreach (json_decode(getenv('CASES'), true) as $c) {
            $out[] = tollgate_verify_release($c['file'], $c['signature'], $c['signing_key_id'], $keys) ? 'valid' : 'refused';
          }
          echo implode(',', $out);`;
        const out = execFileSync(php!, ['-r', code], {
          encoding: 'utf8',
          env: { PATH: process.env.PATH, KEYS: JSON.stringify(keys), CASES: JSON.stringify(cases) },
        });
        expect(out.split(',')).toEqual(expected);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});

describe('the data step that signs artifacts stored before signing existed', () => {
  let t: TestApp;
  const zips = new Map<number, Buffer>();
  /** Artifacts: a plain, an encrypted, a withdrawn, a damaged one, and an external link. */
  const ids = { plain: 0, encrypted: 0, withdrawn: 0, damaged: 0, external: 0 };
  /** The columns as signing at upload stored them. */
  const original = new Map<number, Record<string, unknown>>();

  const INTEGRITY = { file_md5: null, signature: null, signing_key_id: null, signed_at: null };
  /** The integrity columns of these artifacts nulled, as a database from before migration 2026112590 has them. */
  const asBeforeSigning = (artifactIds: number[]) =>
    t.app.services.database.db
      .updateTable('artifacts')
      .set(INTEGRITY)
      .where('id', 'in', artifactIds)
      .execute();
  const integrityOf = async (id: number) => {
    const row = await artifactRow(t, id);
    return {
      file_md5: row.file_md5,
      signature: row.signature,
      signing_key_id: row.signing_key_id,
      signed_at: row.signed_at,
      updated_at: row.updated_at,
    };
  };

  /** A logger that keeps what it is given, as the server's logger would write it. */
  function logger() {
    const lines: { level: string; obj: Record<string, unknown>; msg: string }[] = [];
    const at =
      (level: string) =>
      (obj: unknown, msg?: string): void => {
        lines.push({ level, obj: obj as Record<string, unknown>, msg: msg ?? '' });
      };
    return { lines, log: { info: at('info'), warn: at('warn'), error: at('error') } as never };
  }

  beforeAll(async () => {
    t = await createTestApp();
    const plain = await softwareProduct(t, { licensing_enabled: 'no' });
    const encrypted = await softwareProduct(t, { storage_driver: 'local_encrypted' });
    const put = async (productId: number, version: string, extra: [string, string][] = []) => {
      const zip = makeZip(4000);
      const r = (await publish(t, productId, version, extra, zip)) as unknown as SignedRelease;
      zips.set(r.artifact_id, zip);
      original.set(r.artifact_id, await integrityOf(r.artifact_id));
      return r;
    };
    ids.plain = (await put(plain.id, '1.0.0')).artifact_id;
    ids.encrypted = (await put(encrypted.id, '1.0.0')).artifact_id;
    const w = await put(plain.id, '0.9.0');
    ids.withdrawn = w.artifact_id;
    await adminOk(t, 'POST', `/software/products/${plain.id}/versions/${w.version_id}/withdraw`);
    ids.damaged = (await put(encrypted.id, '0.5.0', [['storage_driver', 'local']])).artifact_id;
    const ext = await adminOk<SignedRelease>(t, 'POST', `/software/products/${plain.id}/versions`, {
      version: '0.1.0',
      status: 'draft',
      external_url: 'https://downloads.example.com/p-0.1.0.zip',
      file_sha256: 'b'.repeat(64),
    });
    ids.external = ext.artifact_id;
    // The damaged artifact: other bytes of the same size in its vault file (its row still names
    // the original SHA-256).
    const row = await artifactRow(t, ids.damaged);
    writeFileSync(join(t.config.vaultDir, row.storage_key), tampered(zips.get(ids.damaged)!));
  });
  afterAll(async () => t.close());

  const managed = () => [ids.plain, ids.encrypted, ids.withdrawn, ids.damaged];

  it('reads plain and encrypted bytes, stores the same MD5 and signature as at upload, and reports a damaged file', async () => {
    await asBeforeSigning([...managed(), ids.external]);
    const { lines, log } = logger();
    const result = await t.app.services.releaseSignatures.signUnsigned(log);
    expect(result).toEqual({
      signed: 3,
      failed: [{ artifact_id: ids.damaged, reason: 'hash_mismatch' }],
      skipped: 0,
      stopped: false,
    });
    for (const id of [ids.plain, ids.encrypted, ids.withdrawn]) {
      const now = await integrityOf(id);
      const before = original.get(id)!;
      // Ed25519 is deterministic: the same key over the same bytes gives the same signature.
      expect(now.signature).toBe(before.signature);
      expect(now.signing_key_id).toBe(before.signing_key_id);
      expect(now.file_md5).toBe(md5(zips.get(id)!));
      expect(now.signed_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    }
    expect(await integrityOf(ids.damaged)).toMatchObject(INTEGRITY);
    expect(await integrityOf(ids.external)).toMatchObject(INTEGRITY);
    // The administrator's view shows the damaged release unsigned, the others signed.
    const row = await artifactRow(t, ids.damaged);
    const view = (await releasesOf(t, row.product_id)).find((r) => r.artifact_id === ids.damaged)!;
    expect(view).toMatchObject({ signature: null, signing_key_id: null, signed_at: null });
    // Logged: the damaged artifact by id and reason, and one summary; no path, key or private material.
    const warned = lines.filter((l) => l.level === 'warn');
    expect(warned.map((l) => l.obj)).toEqual([
      { artifact_id: ids.damaged, driver: 'local', reason: 'hash_mismatch' },
    ]);
    expect(lines.filter((l) => l.level === 'info').map((l) => l.obj)).toEqual([
      { signed: 3, failed: 1, skipped: 0, stopped: false },
    ]);
    const text = JSON.stringify(lines);
    expect(text).not.toContain(row.storage_key);
    expect(text).not.toContain(t.config.vaultDir);
    const sealed = await t.app.services.database.db
      .selectFrom('signing_keys')
      .select('private_key')
      .execute();
    for (const k of sealed) if (k.private_key) expect(text).not.toContain(k.private_key);
  });

  it('is idempotent: a second run reads only what is still unsigned and changes nothing else', async () => {
    const before = await Promise.all(managed().map(integrityOf));
    const { log } = logger();
    const result = await t.app.services.releaseSignatures.signUnsigned(log);
    expect(result).toEqual({
      signed: 0,
      failed: [{ artifact_id: ids.damaged, reason: 'hash_mismatch' }],
      skipped: 0,
      stopped: false,
    });
    expect(await Promise.all(managed().map(integrityOf))).toEqual(before);
  });

  it('is resumable: after a run cut off half-way, the next one signs the rest and leaves the signed ones', async () => {
    // A crash after the plain artifact was stored: the others are still unsigned.
    await asBeforeSigning([ids.encrypted, ids.withdrawn]);
    const plainBefore = await integrityOf(ids.plain);
    const result = await t.app.services.releaseSignatures.signUnsigned(logger().log);
    expect(result.signed).toBe(2);
    expect(await integrityOf(ids.plain)).toEqual(plainBefore);
    expect((await integrityOf(ids.encrypted)).signature).toBe(original.get(ids.encrypted)!.signature);
  });

  it('runs at once in two callers store each artifact once', async () => {
    await asBeforeSigning(managed());
    const [a, b] = await Promise.all([
      t.app.services.releaseSignatures.signUnsigned(logger().log),
      t.app.services.releaseSignatures.signUnsigned(logger().log),
    ]);
    expect(a.signed + b.signed).toBe(3);
    expect(a.signed + a.skipped + b.signed + b.skipped).toBeGreaterThanOrEqual(3);
    for (const id of [ids.plain, ids.encrypted, ids.withdrawn]) {
      expect((await integrityOf(id)).signature).toBe(original.get(id)!.signature);
    }
  });

  it('the package answer and the download carry what the step stored', async () => {
    const row = await artifactRow(t, ids.plain);
    const product = await t.app.services.catalogue.getProduct(row.product_id);
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/software/package',
      payload: { slug: product!.slug, purpose: 'install' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ signature: original.get(ids.plain)!.signature });
    const url = new URL(res.json().download_url);
    const dl = await t.app.inject({ method: 'GET', url: `${url.pathname}${url.search}` });
    expect(dl.statusCode).toBe(200);
    expect(dl.headers['content-md5']).toBe(md5(dl.rawPayload));
    expect(dl.headers['x-content-signature']).toBe(original.get(ids.plain)!.signature);
  });

  it('the migrate command (two at once) and a server start run it, on the database and vault they are given', async () => {
    await asBeforeSigning(managed());
    // The spawned processes read DATA_DIR's vault and vault.key; on SQLite, DATA_DIR/tollgate.sqlite.
    let dbCopy: string | null = null;
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      DATA_DIR: t.config.dataDir,
      LOG_LEVEL: 'info',
    };
    if (t.db.config.kind === 'postgres') env.DATABASE_URL = t.db.config.url;
    else {
      dbCopy = join(t.config.dataDir, 'tollgate.sqlite');
      await sql`vacuum into ${dbCopy}`.execute(t.app.services.database.db);
    }
    const other = dbCopy ? openDatabase({ kind: 'sqlite', file: dbCopy, synchronous: 'NORMAL' }) : null;
    const db = other?.db ?? t.app.services.database.db;
    const signatures = async () =>
      (await db.selectFrom('artifacts').select(['id', 'signature']).where('id', 'in', managed()).execute())
        .sort((x, y) => x.id - y.id)
        .map((r) => r.signature);
    const expected = [ids.plain, ids.encrypted, ids.withdrawn, ids.damaged]
      .sort((x, y) => x - y)
      .map((id) => (id === ids.damaged ? null : original.get(id)!.signature));
    try {
      expect(await signatures()).toEqual([null, null, null, null]);
      const migrate = () =>
        new Promise<{ code: number | null; out: string }>((resolve) => {
          const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'migrate'], {
            cwd: new URL('../..', import.meta.url).pathname,
            env,
            stdio: ['ignore', 'pipe', 'pipe'],
          });
          let out = '';
          child.stdout.on('data', (d: Buffer) => {
            out += d.toString();
          });
          child.stderr.on('data', (d: Buffer) => {
            out += d.toString();
          });
          child.once('exit', (code) => resolve({ code, out }));
        });
      const runs = await Promise.all([migrate(), migrate()]);
      for (const run of runs) {
        expect(run.code, run.out).toBe(0);
        expect(run.out).toContain('migrations complete');
        expect(run.out).toContain('"artifact_id":');
        expect(run.out).not.toContain(t.config.vaultDir);
      }
      expect(await signatures()).toEqual(expected);

      // A server started on a store upgraded without `migrate` signs before it listens.
      await db.updateTable('artifacts').set(INTEGRITY).where('id', 'in', managed()).execute();
      const { DATA_DIR, DATABASE_URL } = env;
      const server = await startServer({ DATA_DIR: DATA_DIR!, ...(DATABASE_URL ? { DATABASE_URL } : {}) });
      try {
        expect(await signatures()).toEqual(expected);
      } finally {
        await server.stop();
      }

      // A signing key that cannot be opened (sealed with a vault key this process lacks): the step
      // stops with one error line, signs nothing, and the command still completes.
      await db
        .updateTable('signing_keys')
        .set({ private_key: Buffer.alloc(80, 7).toString('base64') })
        .where('retired_at', 'is', null)
        .execute();
      await db.updateTable('artifacts').set(INTEGRITY).where('id', 'in', managed()).execute();
      const stopped = await migrate();
      expect(stopped.code, stopped.out).toBe(0);
      expect(stopped.out).toContain('"code":"signing_key_unavailable"');
      expect(stopped.out).toContain('migrations complete');
      expect(await signatures()).toEqual([null, null, null, null]);
    } finally {
      await other?.close();
    }
  }, 180_000);
});

describe('when the signing key cannot be opened', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it('an upload is refused with 500 signing_key_unavailable and nothing is stored', async () => {
    const product = await softwareProduct(t);
    // The active key's private half sealed with a vault key this server does not have.
    await t.app.services.database.db
      .insertInto('signing_keys')
      .values({
        key_id: 'k1-00000000',
        algorithm: 'ed25519',
        public_key: Buffer.alloc(32, 1).toString('base64'),
        private_key: Buffer.alloc(80, 7).toString('base64'),
        created_at: new Date().toISOString(),
        retired_at: null,
      })
      .execute();
    const before = await snapshot(t);
    expectError(await uploadRelease(t, product.id, '1.0.0'), 500, 'signing_key_unavailable');
    expect(await snapshot(t)).toEqual(before);
  });
});
