/**
 * bench/download: GET /v1/software/download of a 100 MB package (local and local_encrypted)
 * against a minimal reference server that does the same integrity pass before the first byte (a
 * full SHA-256, or one authenticated decryption pass) and then streams in 1 MiB reads. Each
 * round issues a fresh token (not timed) and times the redemption from request to last byte.
 *
 *   taskset -c 1 node --import tsx bench/download.ts [--mb 100] [--rounds 5]
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sha256 } from '../src/random.js';
import { makeZip } from '../test/releases/helpers.js';
import { startPinned } from './lib.js';

const { values } = parseArgs({
  options: { mb: { type: 'string', default: '100' }, rounds: { type: 'string', default: '5' } },
});
const MB = Number(values.mb);
const ROUNDS = Number(values.rounds);
const ADMIN = { email: 'bench@example.com', password: 'bench password 123' };
const KEY = randomBytes(32).toString('base64');
const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-bench-dl-'));

/** Times one GET to the last byte; answers MB/s of plaintext. */
async function timed(url: string, size: number): Promise<number> {
  const started = process.hrtime.bigint();
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`download: ${res.status} ${await res.text()}`);
  let n = 0;
  for await (const chunk of res.body!) n += (chunk as Uint8Array).length;
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (n !== size) throw new Error(`short body ${n} of ${size}`);
  return size / 1e6 / seconds;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function vaultFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.name.startsWith('.')) continue;
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(p);
    }
  };
  walk(join(dataDir, 'vault'));
  return out;
}

async function main() {
  const zip = makeZip(MB * 1_000_000);
  const digest = sha256(zip);
  const server = await startPinned(0, ['node', '--import', 'tsx', 'src/main.ts', 'serve'], {
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    VAULT_KEY: KEY,
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
  });
  const results: string[] = [];
  try {
    const base = server.url;
    const login = await fetch(`${base}/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(ADMIN),
    });
    const cookie = login.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const { nonce, user } = (await login.json()) as { nonce: string; user: { id: number } };
    const auth = { cookie, 'x-rest-nonce': nonce };
    const json = async (
      method: string,
      path: string,
      body: unknown,
      headers: Record<string, string> = auth,
    ) => {
      const res = await fetch(`${base}/v1${path}`, {
        method,
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
      return (await res.json()) as Record<string, string & number>;
    };
    await json('PATCH', '/settings', { rate_limit: 100 });
    const ours: Record<string, number[]> = {};
    for (const driver of ['local', 'local_encrypted']) {
      const slug = `bench-${driver.replace('_', '-')}`;
      const product = await json('POST', '/products', {
        name: slug,
        type: 'simple',
        price: '1.00',
        licensing_enabled: 'yes',
      });
      await json('POST', `/software/products/${product.id}/config`, {
        slug,
        software_enabled: 'yes',
        storage_driver: driver,
      });
      const before = new Set(vaultFiles());
      const form = new FormData();
      form.append('version', '1.0.0');
      form.append('file', new Blob([zip]), 'upload.zip');
      const up = await fetch(`${base}/v1/software/products/${product.id}/versions`, {
        method: 'POST',
        headers: auth,
        body: form,
      });
      if (up.status !== 201) throw new Error(`upload: ${up.status} ${await up.text()}`);
      const file = vaultFiles().find((f) => !before.has(f))!;
      const lic = await json('POST', '/licenses', { product_id: product.id, user_id: user.id });
      const site = { domain: `${slug}.example.com`, installation_id: randomUUID() };
      await json('POST', '/licenses/activate', { license_key: lic.license_key, ...site }, {});
      const body = {
        slug,
        purpose: 'install',
        license_key: lic.license_key,
        site_url: site.domain,
        installation_id: site.installation_id,
      };
      ours[driver] = [];
      for (let i = 0; i <= ROUNDS; i++) {
        const pkg = await json('POST', '/software/package', body, {});
        const mbps = await timed(String(pkg.download_url), zip.length);
        if (i > 0) ours[driver]!.push(mbps); // round 0 warms up
      }
      const ref = await startPinned(0, ['node', '--import', 'tsx', 'bench/download-reference.ts'], {
        FILE: file,
        SIZE: String(zip.length),
        SHA: digest,
        ...(driver === 'local_encrypted' ? { KEY } : {}),
      });
      const theirs: number[] = [];
      for (let i = 0; i <= ROUNDS; i++) {
        const mbps = await timed(`${ref.url}/`, zip.length);
        if (i > 0) theirs.push(mbps);
      }
      await ref.stop();
      const a = median(ours[driver]!);
      const b = median(theirs);
      results.push(
        `${driver.padEnd(16)} file ${statSync(file).size} B; ours ${a.toFixed(0)} MB/s, reference ${b.toFixed(0)} MB/s, ratio ${((a / b) * 100).toFixed(1)}% (target >= 80%)`,
      );
    }
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  console.log(`package ${MB} MB, median of ${ROUNDS} sequential downloads (integrity pass + transfer):`);
  for (const r of results) console.log(r);
}

main().catch((e) => {
  console.error(e);
  rmSync(dataDir, { recursive: true, force: true });
  process.exit(1);
});
