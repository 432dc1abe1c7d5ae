import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { multipart } from '../helpers/app.js';
import { zipParts } from '../helpers/zip.js';

const run = promisify(execFile);
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const WORDPRESS = '/usr/share/wordpress';
const DRIVER = join(ROOT, 'test/wordpress/wp.php');
export const SDK = join(ROOT, 'sdk/wordpress');

/**
 * Whether the WordPress tests can run here: Debian's wordpress package, PHP with mysqli and
 * MariaDB's server. `.ci/run` installs them; under CI a missing piece is a failure, not a skip.
 */
export function wordpressPrerequisites(): string | null {
  const missing: string[] = [];
  if (!existsSync(join(WORDPRESS, 'wp-load.php'))) missing.push('wordpress');
  if (!existsSync('/usr/sbin/mariadbd')) missing.push('mariadb-server');
  try {
    const php = spawnSyncText('php', [
      '-r',
      'echo extension_loaded("mysqli") && extension_loaded("sodium") ? "ok" : "no";',
    ]);
    if (php !== 'ok') missing.push('php-mysql');
  } catch {
    missing.push('php-cli');
  }
  return missing.length
    ? `missing ${missing.join(', ')} (apt-get install wordpress php-cli php-mysql php-curl mariadb-server)`
    : null;
}

function spawnSyncText(cmd: string, args: string[]): string {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

// ─── MariaDB and WordPress ──────────────────────────────────────────────────────────────────────

export interface Site {
  url: string;
  root: string;
  adminPassword: string;
  /** Runs a command of test/wordpress/wp.php in this site. */
  wp<T = unknown>(command: string, args?: Record<string, unknown>): Promise<WpAnswer<T>>;
  /** An administrator's browser: cookies kept, redirects not followed. */
  browser(): Promise<WpBrowser>;
  stop(): Promise<void>;
}

export interface WpAnswer<T> {
  result: T;
  output: string;
  downloads: string[];
  /** PHP's warnings and notices while the command ran. */
  warnings: string[];
}

/**
 * A real WordPress: a throw-away MariaDB (scripts/mariadb-server.sh), a copy of Debian's WordPress
 * core in a temp dir (the package's own files are never changed), a wp-config.php of our own,
 * installed by wp_install() from PHP and served by `php -S`.
 */
export async function startWordPress(opts: { multisite?: boolean } = {}): Promise<Site> {
  const work = mkdtempSync(join(tmpdir(), 'tollgate-wp-'));
  // MariaDB runs as another user (scripts/mariadb-server.sh), which must reach its directory.
  chmodSync(work, 0o755);
  const dbDir = join(work, 'mariadb');
  const dbPort = await freePort();
  let php: ChildProcess | null = null;
  const stop = async () => {
    if (php && php.exitCode === null) {
      await new Promise<void>((resolve) => {
        php!.once('exit', () => resolve());
        php!.kill('SIGTERM');
      });
    }
    await run(join(ROOT, 'scripts/mariadb-server.sh'), ['stop', dbDir]).catch(() => {});
    rmSync(work, { recursive: true, force: true });
  };
  try {
    await run(join(ROOT, 'scripts/mariadb-server.sh'), ['start', dbDir, String(dbPort)], {
      timeout: 120_000,
    });
    await run('mysql', ['-h127.0.0.1', `-P${dbPort}`, '-uroot', '-e', 'CREATE DATABASE wordpress']);
    const root = join(work, 'wordpress');
    // Core without its 60 MB of translations.
    cpSync(WORDPRESS, root, {
      recursive: true,
      dereference: true,
      filter: (src) => !src.startsWith(join(WORDPRESS, 'wp-content/languages')),
    });
    mkdirSync(join(root, 'wp-content/mu-plugins'), { recursive: true });
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const salt = () => createHash('sha256').update(Math.random().toString()).digest('hex');
    const config = (extra: string) => `<?php
define('DB_NAME', 'wordpress');
define('DB_USER', 'root');
define('DB_PASSWORD', '');
define('DB_HOST', '127.0.0.1:${dbPort}');
define('DB_CHARSET', 'utf8mb4');
define('DB_COLLATE', '');
${[
  'AUTH_KEY',
  'SECURE_AUTH_KEY',
  'LOGGED_IN_KEY',
  'NONCE_KEY',
  'AUTH_SALT',
  'SECURE_AUTH_SALT',
  'LOGGED_IN_SALT',
  'NONCE_SALT',
]
  .map((k) => `define('${k}', '${salt()}');`)
  .join('\n')}
$table_prefix = 'wp_';
${opts.multisite ? '' : `define('WP_HOME', '${url}');\ndefine('WP_SITEURL', '${url}');`}
${extra}
define('WP_DEBUG', false);
define('DISABLE_WP_CRON', true);
define('FS_METHOD', 'direct');
define('WP_AUTO_UPDATE_CORE', false);
define('WP_HTTP_BLOCK_EXTERNAL', true);
if (!defined('ABSPATH')) define('ABSPATH', __DIR__ . '/');
require_once ABSPATH . 'wp-settings.php';
`;
    writeFileSync(
      join(root, 'wp-config.php'),
      config(opts.multisite ? "define('WP_ALLOW_MULTISITE', true);" : ''),
    );
    writeFileSync(join(root, '.site-url'), url);
    const adminPassword = 'wordpress admin password';
    const wp = async <T>(command: string, args: Record<string, unknown> = {}): Promise<WpAnswer<T>> => {
      const { stdout } = await run(
        'php',
        ['-d', 'display_errors=stderr', DRIVER, root, command, JSON.stringify(args)],
        {
          timeout: 120_000,
          maxBuffer: 16 * 1024 * 1024,
        },
      );
      const line = stdout.trim().split('\n').pop() ?? '';
      try {
        return JSON.parse(line) as WpAnswer<T>;
      } catch {
        throw new Error(`wp.php ${command} printed no answer:\n${stdout}`);
      }
    };
    await wp('install', { password: adminPassword, multisite: opts.multisite === true });
    if (opts.multisite) {
      // A subdirectory network (docs/sdk-wordpress.md, 'Multisite') of three sites.
      const host = new URL(url).host;
      writeFileSync(
        join(root, 'wp-config.php'),
        config(`define('WP_ALLOW_MULTISITE', true);
define('MULTISITE', true);
define('SUBDOMAIN_INSTALL', false);
define('DOMAIN_CURRENT_SITE', '${host}');
define('PATH_CURRENT_SITE', '/');
define('SITE_ID_CURRENT_SITE', 1);
define('BLOG_ID_CURRENT_SITE', 1);`),
      );
      for (const n of [2, 3]) {
        const created = await wp('create-site', { path: `/site${n}/`, title: `Site ${n}` });
        if (created.result !== n) throw new Error(`site ${n} not created: ${JSON.stringify(created)}`);
      }
    }
    const server = ['-S', `127.0.0.1:${port}`, '-t', root];
    if (opts.multisite) server.push(join(ROOT, 'test/wordpress/router.php'));
    php = spawn('php', server, { cwd: root, stdio: 'ignore' });
    await waitForHttp(`${url}/wp-login.php`);
    return {
      url,
      root,
      adminPassword,
      wp,
      browser: () => WpBrowser.login(url, 'admin', adminPassword),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function waitForHttp(url: string): Promise<void> {
  const until = Date.now() + 20_000;
  for (;;) {
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      return;
    } catch (err) {
      if (Date.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** A signed-in WordPress administrator over real HTTP (wp-login.php), with its cookies. */
export class WpBrowser {
  private cookies = new Map<string, string>();

  private constructor(private readonly base: string) {}

  static async login(base: string, user: string, password: string): Promise<WpBrowser> {
    const b = new WpBrowser(base);
    b.cookies.set('wordpress_test_cookie', 'WP%20Cookie%20check');
    const res = await b.request('/wp-login.php', {
      form: {
        log: user,
        pwd: password,
        'wp-submit': 'Log In',
        testcookie: '1',
        redirect_to: `${base}/wp-admin/`,
      },
    });
    if (res.status !== 302) throw new Error(`WordPress login failed: ${res.status}`);
    return b;
  }

  async request(
    path: string,
    opts: { form?: Record<string, string> } = {},
  ): Promise<{ status: number; location: string; body: string }> {
    const res = await fetch(path.startsWith('http') ? path : `${this.base}${path}`, {
      method: opts.form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: {
        cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(opts.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: opts.form ? new URLSearchParams(opts.form).toString() : undefined,
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, i), pair!.slice(i + 1));
    }
    return { status: res.status, location: res.headers.get('location') ?? '', body: await res.text() };
  }
}

// ─── The vendor's plugin and theme ──────────────────────────────────────────────────────────────

/** Every file of the SDK folder, as `[path inside sdk/wordpress, bytes]`. */
function sdkFiles(): [string, Buffer][] {
  const out: [string, Buffer][] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else out.push([relative(SDK, path), readFileSync(path)]);
    }
  };
  walk(SDK);
  return out;
}

/**
 * The vendor's plugin: its header and the ten lines of docs/sdk-wordpress.md, plus the SDK folder
 * copied in as `tollgate/`. `store` is the store's address as the site reaches it.
 */
export function pluginFiles(
  store: string,
  version: string,
  renewalUrl: string,
  slug = 'acme-widget',
  name = 'Acme Widget',
): [string, Buffer][] {
  const main = `<?php
/**
 * Plugin Name: ${name}
 * Description: A licensed plugin updated from a Tollgate store.
 * Version: ${version}
 * Requires PHP: 7.4
 * Update URI: ${store}
 */
if (!defined('ABSPATH')) exit;
require_once __DIR__ . '/tollgate/tollgate-updater.php';
Tollgate\\Updater::register('${store}', '${slug}', __FILE__, ['renewal_url' => '${renewalUrl}']);
`;
  return [
    [`${slug}/${slug}.php`, Buffer.from(main)],
    ...sdkFiles().map(([p, b]): [string, Buffer] => [`${slug}/tollgate/${p}`, b]),
  ];
}

/** The vendor's theme: style.css with its version and a functions.php of three lines. */
export function themeFiles(store: string, version: string): [string, Buffer][] {
  const style = `/*
Theme Name: Acme Theme
Version: ${version}
Requires PHP: 7.4
*/
`;
  const functions = `<?php
require_once __DIR__ . '/tollgate/tollgate-updater.php';
Tollgate\\Updater::register('${store}', 'acme-theme', __FILE__);
`;
  return [
    ['acme-theme/style.css', Buffer.from(style)],
    ['acme-theme/index.php', Buffer.from('<?php\n// Silence is golden.\n')],
    ['acme-theme/functions.php', Buffer.from(functions)],
    ...sdkFiles().map(([p, b]): [string, Buffer] => [`acme-theme/tollgate/${p}`, b]),
  ];
}

export function zipOf(files: [string, Buffer][]): Buffer {
  return Buffer.concat([...zipParts(files.map(([name, data]) => ({ name, data })))]);
}

/** Writes files under `dir` (an installed copy, as if extracted by WordPress). */
export function writeFiles(dir: string, files: [string, Buffer][]): void {
  for (const [name, data] of files) {
    const path = join(dir, name);
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, data);
  }
}

/**
 * A compiled translation (GNU gettext's .mo format, as WordPress's MO class reads it) of
 * `translations` (msgid to msgstr; a plural's msgid and msgstr hold their forms joined by NUL).
 */
export function moFile(
  translations: Record<string, string>,
  pluralForms = 'nplurals=2; plural=(n > 1);',
): Buffer {
  const entries: [string, string][] = [
    ['', `Content-Type: text/plain; charset=UTF-8\nPlural-Forms: ${pluralForms}\n`],
    ...Object.entries(translations),
  ];
  entries.sort(([a], [b]) => Buffer.from(a).compare(Buffer.from(b)));
  const n = entries.length;
  const tables = 28 + n * 16;
  const head = Buffer.alloc(tables);
  head.writeUInt32LE(0x950412de, 0);
  head.writeUInt32LE(0, 4);
  head.writeUInt32LE(n, 8);
  head.writeUInt32LE(28, 12);
  head.writeUInt32LE(28 + n * 8, 16);
  head.writeUInt32LE(0, 20);
  head.writeUInt32LE(tables, 24);
  const strings: Buffer[] = [];
  let offset = tables;
  const place = (text: string, table: number, i: number) => {
    const bytes = Buffer.from(text);
    head.writeUInt32LE(bytes.length, table + i * 8);
    head.writeUInt32LE(offset, table + i * 8 + 4);
    strings.push(bytes, Buffer.from([0]));
    offset += bytes.length + 1;
  };
  for (const [i, [id]] of entries.entries()) place(id, 28, i);
  for (const [i, [, str]] of entries.entries()) place(str, 28 + n * 8, i);
  return Buffer.concat([head, ...strings]);
}

// ─── The store ──────────────────────────────────────────────────────────────────────────────────

/** An administrator of a store process over real HTTP. */
export class StoreAdmin {
  constructor(
    readonly url: string,
    private readonly headers: Record<string, string>,
  ) {}

  async call<T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: T }> {
    const res = await fetch(`${this.url}/v1${path}`, {
      method,
      headers: { ...this.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as T };
  }

  async ok<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.call<T>(method, path, body);
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  /** A published, licensed product distributing software under `slug`. */
  async product(slug: string): Promise<number> {
    const product = await this.ok<{ id: number }>('POST', '/products', {
      name: slug,
      type: 'simple',
      price: '49.00',
      licensing_enabled: 'yes',
    });
    await this.ok('POST', `/software/products/${product.id}/config`, { slug, software_enabled: 'yes' });
    return product.id;
  }

  async release(productId: number, version: string, zip: Buffer): Promise<Record<string, unknown>> {
    const form = multipart([
      ['version', version],
      [
        'changelog',
        JSON.stringify({
          narrative: `Release ${version}.`,
          points: [{ type: 'added', text: `Feature of ${version}` }],
        }),
      ],
      ['file', { filename: 'upload.zip', content: zip }],
    ]);
    const res = await fetch(`${this.url}/v1/software/products/${productId}/versions`, {
      method: 'POST',
      headers: { ...this.headers, 'content-type': form.contentType },
      body: form.body,
    });
    const body = (await res.json()) as Record<string, unknown>;
    if (res.status !== 201) throw new Error(`upload ${version}: ${res.status} ${JSON.stringify(body)}`);
    return body;
  }

  async license(productId: number): Promise<{ id: number; license_key: string }> {
    const me = await this.ok<{ user: { id: number } }>('GET', '/auth/me');
    return this.ok('POST', '/licenses', { product_id: productId, user_id: me.user.id });
  }
}

/**
 * A pass-through HTTP proxy in front of the store: the site reaches the store through it (the
 * store's PUBLIC_URL names it), and a test can make it damage the next downloads the way a broken
 * transfer or an attacker on the path would. `mode`:
 * - `pass`: every answer as the store sent it;
 * - `flip`: one byte of a download's body changed, headers kept (Content-MD5 no longer matches);
 * - `flip-md5`: the byte changed and Content-MD5 computed again over the changed bytes, so only
 *   the release signature can tell;
 * - `down`: every request answered 503 with an HTML page, as a store behind a failing proxy;
 * - `limited`: every request answered `429 rate_limited` with `retry_after` 120.
 * `requests` counts the requests that reached the proxy.
 */
export interface StoreProxy {
  url: string;
  mode: 'pass' | 'flip' | 'flip-md5' | 'down' | 'limited';
  requests: number;
  close(): Promise<void>;
}

export async function startProxy(port: number, target: () => string): Promise<StoreProxy> {
  const state: StoreProxy = {
    url: `http://127.0.0.1:${port}`,
    mode: 'pass',
    requests: 0,
    close: async () => {},
  };
  const server: Server = createServer((req, res) => {
    state.requests++;
    if (state.mode === 'down') {
      res.writeHead(503, { 'content-type': 'text/html' });
      res.end('<html><body>Service unavailable</body></html>');
      return;
    }
    if (state.mode === 'limited') {
      res.writeHead(429, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          code: 'rate_limited',
          message: 'Too many requests.',
          data: { status: 429, retry_after: 120 },
        }),
      );
      return;
    }
    const upstream = new URL(req.url ?? '/', target());
    const out = httpRequest(upstream, { method: req.method, headers: req.headers }, (answer) => {
      const damaging =
        state.mode !== 'pass' && upstream.pathname === '/v1/software/download' && answer.statusCode === 200;
      if (!damaging) {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        return;
      }
      const chunks: Buffer[] = [];
      answer.on('data', (c: Buffer) => chunks.push(c));
      answer.on('end', () => {
        const body = Buffer.concat(chunks);
        const middle = body.length >> 1;
        body[middle] = (body[middle] ?? 0) ^ 0x01;
        const headers = { ...answer.headers };
        if (state.mode === 'flip-md5')
          headers['content-md5'] = createHash('md5').update(body).digest('base64');
        res.writeHead(200, headers);
        res.end(body);
      });
    });
    out.on('error', () => {
      res.writeHead(502);
      res.end();
    });
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  state.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return state;
}
