/**
 * bench/download: GET /v1/software/download of a 100 MB package (local and local_encrypted)
 * against a minimal reference server that does the same integrity pass before the first byte (a
 * full SHA-256, or one authenticated decryption pass) and then streams in 1 MiB reads, and, for
 * context, nginx serving the stored file as it is (when the `nginx` binary is installed). Each
 * round issues a fresh token (not timed) and times the redemption from request to last byte, then
 * one download from the reference and one from nginx: the servers take turns.
 * Then 4 encrypted downloads run in parallel while the server's RSS is sampled.
 *
 *   npm run build && taskset -c 1 node --import tsx bench/download.ts [--mb 100] [--rounds 20]
 */

import { spawn, spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { sha256 } from '../src/random.js';
import { makeZip } from '../test/helpers/factories.js';
import { median, rssMb, SERVER_NODE, signIn, startPinned, watchRss } from './lib.js';

const { values } = parseArgs({
  options: { mb: { type: 'string', default: '100' }, rounds: { type: 'string', default: '20' } },
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

/** nginx (Debian package) serving `file` from 127.0.0.1, pinned like the others; null when absent. */
async function startNginx(file: string): Promise<{ url: string; stop(): void } | null> {
  const bin = ['/usr/sbin/nginx', 'nginx'].find((b) => spawnSync(b, ['-v']).status === 0);
  if (!bin) return null;
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-nginx-'));
  const port = 20000 + Math.floor(Math.random() * 20000);
  writeFileSync(
    join(dir, 'nginx.conf'),
    `${process.getuid?.() === 0 ? 'user root; ' : ''}daemon off; worker_processes 1; pid ${dir}/nginx.pid; error_log ${dir}/error.log;
events { worker_connections 64; }
http { access_log off; sendfile on; client_body_temp_path ${dir}; proxy_temp_path ${dir};
  fastcgi_temp_path ${dir}; uwsgi_temp_path ${dir}; scgi_temp_path ${dir};
  server { listen 127.0.0.1:${port}; root ${dirname(file)}; } }\n`,
  );
  const child = spawn('taskset', ['-c', '0', bin, '-c', join(dir, 'nginx.conf'), '-p', dir], {
    stdio: 'ignore',
  });
  const url = `http://127.0.0.1:${port}/${basename(file)}`;
  for (let i = 0; i < 100; i++) {
    if (
      await fetch(url, { method: 'HEAD' }).then(
        (r) => r.ok,
        () => false,
      )
    ) {
      return {
        url,
        stop: () => {
          child.kill('SIGTERM');
          rmSync(dir, { recursive: true, force: true });
        },
      };
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  return null;
}

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
  const server = await startPinned(0, [...SERVER_NODE, 'dist/main.js', 'serve'], {
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    VAULT_KEY: KEY,
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
  });
  const results: string[] = [];
  const pid = server.child.pid!;
  results.push(`server RSS when ready: ${rssMb(pid).toFixed(0)} MB`);
  try {
    const base = server.url;
    const { auth, userId, json } = await signIn(base, ADMIN);
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
      const lic = await json('POST', '/licenses', { product_id: product.id, user_id: userId });
      const site = { domain: `${slug}.example.com`, installation_id: randomUUID() };
      await json('POST', '/licenses/activate', { license_key: lic.license_key, ...site }, {});
      const body = {
        slug,
        purpose: 'install',
        license_key: lic.license_key,
        site_url: site.domain,
        installation_id: site.installation_id,
      };
      // The three servers answer in turn, round by round, so a change in the machine's load
      // between phases cannot skew the ratio (these machines are shared).
      const ref = await startPinned(0, [process.execPath, '--import', 'tsx', 'bench/download-reference.ts'], {
        FILE: file,
        SIZE: String(zip.length),
        SHA: digest,
        ...(driver === 'local_encrypted' ? { KEY } : {}),
      });
      const nginx = await startNginx(file);
      ours[driver] = [];
      const theirs: number[] = [];
      const plain: number[] = [];
      const sequentialRss = watchRss(pid);
      console.log(`${driver}: RSS before the downloads ${rssMb(pid).toFixed(0)} MB`);
      try {
        for (let i = 0; i <= ROUNDS; i++) {
          const pkg = await json('POST', '/software/package', body, {});
          const mbps = await timed(String(pkg.download_url), zip.length);
          const reference = await timed(`${ref.url}/`, zip.length);
          const stored = nginx ? await timed(nginx.url, statSync(file).size) : 0;
          if (i === 0) continue; // round 0 warms up
          ours[driver]!.push(mbps);
          theirs.push(reference);
          plain.push(stored);
        }
      } finally {
        await ref.stop();
        nginx?.stop();
      }
      const sequentialPeak = sequentialRss.stop();
      let parallel = '';
      if (driver === 'local_encrypted') {
        const urls = [];
        for (let i = 0; i < 4; i++)
          urls.push(String((await json('POST', '/software/package', body, {})).download_url));
        const rss = watchRss(pid);
        const started = process.hrtime.bigint();
        await Promise.all(urls.map((u) => timed(u, zip.length)));
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        parallel = `; 4 in parallel: ${((4 * zip.length) / 1e6 / seconds).toFixed(0)} MB/s in all, peak RSS ${rss.stop().toFixed(0)} MB (target < 150 MB)`;
      }
      const context = nginx
        ? `nginx (stored bytes, no check) ${median(plain).toFixed(0)} MB/s`
        : 'nginx not installed';
      const a = median(ours[driver]!);
      const b = median(theirs);
      results.push(
        `${driver.padEnd(16)} file ${statSync(file).size} B; ours ${a.toFixed(0)} MB/s, reference ${b.toFixed(0)} MB/s, ratio ${((a / b) * 100).toFixed(1)}% (target >= 80%); ${context}; peak RSS over the sequential downloads ${sequentialPeak.toFixed(0)} MB${parallel}`,
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
