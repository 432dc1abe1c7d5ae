import { delimiter, isAbsolute, resolve } from 'node:path';
import proxyAddr from '@fastify/proxy-addr';

/** The European Commission's VIES REST API (docs/taxes.md, 'VAT numbers'). */
export const DEFAULT_VIES_URL = 'https://ec.europa.eu/taxation_customs/vies/rest-api';

/** Chosen by measurement: docs/performance.md, 'Pool size'. */
export const DEFAULT_POOL_SIZE = 10;

export type DatabaseConfig =
  | { kind: 'sqlite'; file: string; synchronous: 'NORMAL' | 'FULL' }
  | {
      kind: 'postgres';
      url: string;
      /** Connections this process keeps to the server at most (DATABASE_POOL_SIZE; docs/performance.md, 'Pool size'). */
      poolSize?: number;
    };

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  database: DatabaseConfig;
  publicUrl: string;
  adminEmail?: string;
  adminPassword?: string;
  testClock: boolean;
  logLevel: string;
  /**
   * Whom X-Forwarded-For is believed from, so per-IP limits see clients: false (no proxy), true
   * (TRUST_PROXY=1: its first address), or the proxies' addresses and CIDRs (TRUSTED_PROXIES: the
   * right-most address not in the list). docs/operations.md, 'nginx'.
   */
  trustProxy: boolean | string[];
  /** Largest JSON body accepted, in bytes (uploads have their own limit). */
  bodyLimit: number;
  /** Private artifact vault (VAULT_DIR, default DATA_DIR/vault): docs/releases.md. */
  vaultDir: string;
  /** Directories a web server serves to anyone: DATA_DIR/public always, plus PUBLIC_ROOTS. */
  publicRoots: string[];
  /** Folders the console's import may read: DATA_DIR/imports always, plus IMPORT_ROOTS (docs/migrating.md). */
  importRoots: string[];
  /** Key of the encrypted vault (VAULT_KEY, base64 of 32 bytes); null = generated into DATA_DIR on first use. */
  vaultKey: Buffer | null;
  /** Retired vault keys still needed to read older artifacts (VAULT_PREVIOUS_KEYS, comma-separated). */
  vaultPreviousKeys: Buffer[];
  /** Largest release or catalogue upload, in bytes (MAX_UPLOAD_BYTES, default 512 MiB). */
  maxUploadBytes: number;
  /** Port of the second listener that answers GET /metrics (METRICS_PORT); null = no metrics at all (docs/operations.md). */
  metricsPort: number | null;
  /**
   * Where the Stripe SDK sends its API requests (STRIPE_API_URL); null = Stripe's own
   * api.stripe.com. Tests point it at a local stand-in (docs/payments.md, 'Stripe').
   */
  stripeApiUrl: string | null;
  /**
   * The VIES REST API that checks business buyers' VAT numbers (VIES_URL; docs/taxes.md), and how
   * long checkout waits for it (VIES_TIMEOUT_MS) before charging VAT without the check.
   */
  viesUrl: string;
  viesTimeoutMs: number;
  /** Object storage for new artifacts (S3_*: docs/operations.md, 'Object storage'); null = the vault. */
  s3: S3Config | null;
}

/** An S3-compatible bucket (AWS, MinIO, Cloudflare R2, Backblaze B2). */
export interface S3Config {
  bucket: string;
  /** Key prefix inside the bucket ('' or ending in '/'). */
  prefix: string;
  region: string;
  /** Null = AWS's own endpoint for the region. */
  endpoint: string | null;
  forcePathStyle: boolean;
  /** Null = the SDK's default chain (environment, shared files, instance role). */
  credentials: { accessKeyId: string; secretAccessKey: string } | null;
}

export class ConfigError extends Error {}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return Number(raw);
}

/**
 * TRUSTED_PROXIES, checked with the same parser Fastify will use on every request (proxy-addr), so
 * that an address or CIDR it would refuse stops the start here, naming the variable.
 */
function trustedProxies(env: NodeJS.ProcessEnv): boolean | string[] {
  const raw = env.TRUSTED_PROXIES;
  if (raw === undefined || raw.trim() === '') return env.TRUST_PROXY === '1';
  if (env.TRUST_PROXY === '1') {
    throw new ConfigError('TRUST_PROXY and TRUSTED_PROXIES are alternatives: set one of them');
  }
  const list = raw.split(',').map((a) => a.trim());
  if (list.some((a) => a === '')) {
    throw new ConfigError(`TRUSTED_PROXIES must be comma-separated addresses or CIDRs, got "${raw}"`);
  }
  try {
    proxyAddr.compile(list);
  } catch (e) {
    throw new ConfigError(
      `TRUSTED_PROXIES must be comma-separated addresses or CIDRs: ${(e as Error).message}`,
    );
  }
  return list;
}

function httpOrigin(name: string, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an absolute http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`${name} must use http or https, got "${raw}"`);
  }
  return url.href.replace(/\/+$/, '');
}

/** A 32-byte AES key given as base64 (standard or URL-safe alphabet). */
function vaultKey(name: string, raw: string): Buffer {
  const text = raw.trim();
  const key = Buffer.from(text, 'base64');
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text) || key.length !== 32) {
    throw new ConfigError(
      `${name} must be base64 of exactly 32 random bytes (e.g. \`openssl rand -base64 32\`), got ${key.length} bytes`,
    );
  }
  return key;
}

const FLAGS: Record<string, boolean> = { '1': true, true: true, '0': false, false: false, '': false };

/**
 * The S3_* variables; S3_BUCKET selects object storage. Secrets never appear in a message: a
 * wrong one is named, not shown.
 */
function s3Config(env: NodeJS.ProcessEnv): S3Config | null {
  const names = [
    'S3_ENDPOINT',
    'S3_REGION',
    'S3_PREFIX',
    'S3_ACCESS_KEY_ID',
    'S3_SECRET_ACCESS_KEY',
    'S3_FORCE_PATH_STYLE',
  ];
  const bucket = env.S3_BUCKET ?? '';
  if (!bucket) {
    const stray = names.filter((n) => env[n]);
    if (stray.length > 0) throw new ConfigError(`${stray.join(', ')} set without S3_BUCKET`);
    return null;
  }
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{1,253}[A-Za-z0-9]$/.test(bucket)) {
    throw new ConfigError(
      `S3_BUCKET must be a bucket name (letters, digits, '.', '_', '-'), got "${bucket}"`,
    );
  }
  const forcePathStyle = FLAGS[(env.S3_FORCE_PATH_STYLE ?? '').toLowerCase()];
  if (forcePathStyle === undefined) {
    throw new ConfigError(
      `S3_FORCE_PATH_STYLE must be 1, true, 0 or false, got "${env.S3_FORCE_PATH_STYLE}"`,
    );
  }
  const endpoint = env.S3_ENDPOINT ? httpOrigin('S3_ENDPOINT', env.S3_ENDPOINT) : null;
  const accessKeyId = env.S3_ACCESS_KEY_ID ?? '';
  const secretAccessKey = env.S3_SECRET_ACCESS_KEY ?? '';
  if (!accessKeyId !== !secretAccessKey) {
    throw new ConfigError('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY must be set together');
  }
  // Outside AWS there is no instance role or shared profile to fall back on.
  if (endpoint && !accessKeyId) {
    throw new ConfigError('S3_ENDPOINT is set: S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are required');
  }
  const region = env.S3_REGION || 'us-east-1';
  if (!/^[a-z0-9-]{1,40}$/.test(region))
    throw new ConfigError(`S3_REGION must be a region name, got "${region}"`);
  let prefix = (env.S3_PREFIX ?? '').replace(/^\/+/, '');
  if (prefix && !prefix.endsWith('/')) prefix += '/';
  // S3's safe characters only, and no empty, `.` or `..` segment: every store maps it the same way.
  if (prefix.length > 512 || !/^[A-Za-z0-9!_.*'()/-]*$/.test(prefix) || /(^|\/)\.{0,2}\//.test(prefix)) {
    throw new ConfigError(
      "S3_PREFIX must be a key prefix of letters, digits and !_.*'()-/ without empty, . or .. segments",
    );
  }
  return {
    bucket,
    prefix,
    region,
    endpoint,
    forcePathStyle,
    credentials: accessKeyId ? { accessKeyId, secretAccessKey } : null,
  };
}

/** Reads and validates the whole configuration once; a bad value stops the start with a clear message. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = integer(env, 'PORT', 8080, 0, 65535);
  const host = env.HOST || '127.0.0.1';
  const dataDir = resolve(env.DATA_DIR || './data');
  const sync = (env.SQLITE_SYNCHRONOUS || 'NORMAL').toUpperCase();
  if (sync !== 'NORMAL' && sync !== 'FULL') {
    throw new ConfigError(`SQLITE_SYNCHRONOUS must be NORMAL or FULL, got "${env.SQLITE_SYNCHRONOUS}"`);
  }
  let database: DatabaseConfig;
  if (env.DATABASE_URL) {
    if (!/^postgres(ql)?:\/\//.test(env.DATABASE_URL)) {
      throw new ConfigError('DATABASE_URL must start with postgres:// or postgresql://');
    }
    database = {
      kind: 'postgres',
      url: env.DATABASE_URL,
      poolSize: integer(env, 'DATABASE_POOL_SIZE', DEFAULT_POOL_SIZE, 1, 200),
    };
  } else {
    database = { kind: 'sqlite', file: resolve(dataDir, 'tollgate.sqlite'), synchronous: sync };
  }
  const logLevel = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  const testClock = env.TEST_CLOCK === '1';
  if (env.TEST_CLOCK && env.TEST_CLOCK !== '1' && env.TEST_CLOCK !== '0') {
    throw new ConfigError(`TEST_CLOCK must be 1 or unset, got "${env.TEST_CLOCK}"`);
  }
  if ((env.ADMIN_EMAIL && !env.ADMIN_PASSWORD) || (!env.ADMIN_EMAIL && env.ADMIN_PASSWORD)) {
    throw new ConfigError('ADMIN_EMAIL and ADMIN_PASSWORD must be set together');
  }
  if (env.ADMIN_PASSWORD && env.ADMIN_PASSWORD.length < 8) {
    throw new ConfigError('ADMIN_PASSWORD must have at least 8 characters');
  }
  const metricsPort = env.METRICS_PORT ? integer(env, 'METRICS_PORT', 0, 1, 65535) : null;
  if (metricsPort !== null && metricsPort === port) {
    throw new ConfigError(`METRICS_PORT must differ from PORT (both are ${port})`);
  }
  const publicUrl = env.PUBLIC_URL ? httpOrigin('PUBLIC_URL', env.PUBLIC_URL) : '';
  const vaultDir = resolve(dataDir, env.VAULT_DIR || 'vault');
  const publicRoots = [
    resolve(dataDir, 'public'),
    ...(env.PUBLIC_ROOTS || '')
      .split(delimiter)
      .filter(Boolean)
      .map((p) => resolve(p)),
  ];
  const importRoots = [
    resolve(dataDir, 'imports'),
    ...(env.IMPORT_ROOTS || '')
      .split(delimiter)
      .filter(Boolean)
      .map((p) => resolve(p)),
  ];
  return {
    port,
    host,
    dataDir: isAbsolute(dataDir) ? dataDir : resolve(dataDir),
    database,
    publicUrl,
    adminEmail: env.ADMIN_EMAIL || undefined,
    adminPassword: env.ADMIN_PASSWORD || undefined,
    testClock,
    logLevel,
    trustProxy: trustedProxies(env),
    bodyLimit: integer(env, 'BODY_LIMIT', 1024 * 1024, 1024, 64 * 1024 * 1024),
    vaultDir,
    publicRoots,
    importRoots,
    vaultKey: env.VAULT_KEY ? vaultKey('VAULT_KEY', env.VAULT_KEY) : null,
    vaultPreviousKeys: (env.VAULT_PREVIOUS_KEYS || '')
      .split(',')
      .filter((k) => k.trim() !== '')
      .map((k, i) => vaultKey(`VAULT_PREVIOUS_KEYS[${i}]`, k)),
    maxUploadBytes: integer(env, 'MAX_UPLOAD_BYTES', 512 * 1024 * 1024, 1024, 64 * 1024 * 1024 * 1024),
    metricsPort,
    s3: s3Config(env),
    stripeApiUrl: env.STRIPE_API_URL ? httpOrigin('STRIPE_API_URL', env.STRIPE_API_URL) : null,
    viesUrl: httpOrigin('VIES_URL', env.VIES_URL || DEFAULT_VIES_URL),
    viesTimeoutMs: integer(env, 'VIES_TIMEOUT_MS', 3000, 100, 30_000),
  };
}

/** PUBLIC_URL defaults to the address the server really listens on (known only after listen with PORT=0). */
export function resolvePublicUrl(config: Config, boundPort: number): string {
  if (config.publicUrl) return config.publicUrl;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  return `http://${host}:${boundPort}`;
}
