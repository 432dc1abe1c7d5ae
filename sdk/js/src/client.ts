import createClient, { type Client } from 'openapi-fetch';
import {
  type DownloadablePackage,
  type DownloadOptions,
  download,
  type VerifiedDownload,
} from './download.js';
import { errorFromAnswer, isRecord, TollgateError } from './errors.js';
import type { paths } from './openapi.js';
import { type ReceiptClaims, type SigningKey, verifyReceipt } from './signatures.js';
import type { ReceiptStorage } from './storage.js';

type Json<R> = R extends { content: { 'application/json': infer T } } ? T : never;
type PostOk<P extends keyof paths> = paths[P] extends { post: { responses: { 200: infer R } } }
  ? Json<R>
  : never;
type GetOk<P extends keyof paths> = paths[P] extends { get: { responses: { 200: infer R } } }
  ? Json<R>
  : never;

/** The answers of the store's routes, as its OpenAPI document types them. */
export type ActivateAnswer = PostOk<'/v1/licenses/activate'>;
export type ValidAnswer = PostOk<'/v1/licenses/validate'>;
export type DeactivateAnswer = PostOk<'/v1/licenses/deactivate'>;
export type CheckAnswer = PostOk<'/v1/software/check'>;
export type PackageAnswer = PostOk<'/v1/software/package'>;
export type ChangelogAnswer = GetOk<'/v1/software/changelog'>;

/** A license on this site: the key and the website identity (docs/licensing.md, section 1). */
export interface License {
  license_key: string;
  /** The site's URL or host; the store normalises it. */
  domain: string;
  /** A UUID v4 (lowercase) generated once at install and kept. */
  installation_id: string;
}

/** A release channel, most to least stable (docs/distribution.md, section 12). */
export type Channel = 'stable' | 'rc' | 'beta' | 'alpha';

export interface CheckInput extends Partial<License> {
  slug: string;
  /** The version running now. */
  version: string;
  /** The channel the site follows; absent is `stable`. */
  channel?: Channel;
}

export interface PackageInput extends Partial<License> {
  slug: string;
  purpose: 'install' | 'reinstall' | 'update';
  /** Required for `update`, absent otherwise. */
  current_version?: string;
  /** The channel the site follows; absent is `stable`. */
  channel?: Channel;
}

/**
 * What the app runs on, sent with every check and validation for the store's field report
 * (docs/distribution.md, section 12). Values that do not follow the store's rules are left out.
 */
export interface Platform {
  /** Lowercase name, e.g. `node`, `electron`, `wordpress` (1 to 32 of a-z, 0-9, _ and -). */
  platform: string;
  /** Its version, e.g. `process.versions.node`; the store counts major.minor. */
  platform_version?: string;
  /** The PHP version, for apps that run on PHP. */
  php_version?: string;
}

export interface TollgateOptions {
  /** The store's address, e.g. `https://store.example` (its PUBLIC_URL; `/v1` is added). */
  url: string;
  /** What the app runs on, for the store's field report; nothing is sent without it. */
  platform?: Platform;
  /** The fetch to use; default the global one (Node 20+, Electron's main process). */
  fetch?: typeof fetch;
  /** The clock for back-off, the key list's cache and receipts; default the system clock. */
  now?: () => Date;
  /** Milliseconds before a request that got no answer is given up as `network_error`; default 30000. */
  timeoutMs?: number;
}

/** What validateWithGrace answers: from the store, or from the last good receipt during an outage. */
export type GraceResult =
  | { valid: true; source: 'store'; answer: ValidAnswer; claims: ReceiptClaims | null }
  | {
      valid: true;
      source: 'receipt';
      claims: ReceiptClaims;
      /** Until when the receipt may be trusted (RFC 3339). */
      valid_until: string;
      /** Why the store was not asked: the outage. */
      error: TollgateError;
    };

/** How long the public key list is kept, as the store's Cache-Control says (docs/licensing.md). */
const KEYS_CACHE_MS = 300_000;
/** Back-off when a 429 names no `retry_after`: the store's rate window (docs/distribution.md, section 7). */
const DEFAULT_RETRY_AFTER_S = 60;

/**
 * Which 429s hold back which calls: check and package share the store's per-license issuance
 * counter (docs/distribution.md, section 7), so a 429 on one holds both back.
 */
const BACKOFF_GROUP: Record<string, string> = {
  '/v1/software/check': 'issuance',
  '/v1/software/package': 'issuance',
};

/**
 * A client of one store (docs/sdk-js.md): the typed routes of its OpenAPI document as `api`, and
 * the helpers an app's licensing and updater need.
 */
export class Tollgate {
  /** Every route of the store, typed from its OpenAPI document (openapi-fetch). */
  readonly api: Client<paths>;
  private readonly fetcher: typeof fetch;
  private readonly now: () => Date;
  private readonly timeoutMs: number;
  private readonly backoff = new Map<string, number>();
  private keys: { at: number; list: SigningKey[] } | null = null;
  private readonly platform: Partial<Platform>;

  constructor(opts: TollgateOptions) {
    const url = new URL(opts.url);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw new TypeError('The store URL must be http(s)');
    }
    const base = `${url.origin}${url.pathname}`.replace(/\/+$/, '').replace(/\/v1$/, '');
    this.fetcher = opts.fetch ?? globalThis.fetch;
    this.now = opts.now ?? (() => new Date());
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.platform = platformFields(opts.platform);
    this.api = createClient<paths>({ baseUrl: base, fetch: (request) => this.fetcher(request) });
  }

  /**
   * Binds this site to the license (docs/licensing.md, section 2). Idempotent for an active
   * identity. Throws TollgateError with the store's code (`activation_limit_reached`, `expired`,
   * …); in approval mode `oauth_required` with `redirect_url`.
   */
  async activate(
    license: License & {
      /** Metadata for the store's support staff only. */
      machine_id?: string;
      /** Approval mode: where the store sends the customer back (docs/licensing.md, section 2.2). */
      return_url?: string;
      /** Approval mode: the token the callback received. */
      activation_token?: string;
    },
  ): Promise<ActivateAnswer> {
    const answer = await this.call<ActivateAnswer>('/v1/licenses/activate', () =>
      this.api.POST('/v1/licenses/activate', {
        body: only(license, [
          'license_key',
          'domain',
          'installation_id',
          'machine_id',
          'return_url',
          'activation_token',
        ]),
        ...this.init(),
      }),
    );
    if (answer.success !== true) throw errorFromAnswer(200, answer);
    return answer;
  }

  /**
   * Asks the store whether the license is valid on this site (docs/licensing.md, section 3),
   * with an offline receipt unless `receipt: false`. A valid answer returns; any other throws
   * TollgateError, whose `code` is the effective status (`expired`, `revoked`, `domain_not_activated`, …).
   * `version`, the version the app runs, is counted with the `platform` option in the store's
   * field report (docs/distribution.md, section 12).
   */
  async validate(license: License, opts: { receipt?: boolean; version?: string } = {}): Promise<ValidAnswer> {
    const version = opts.version !== undefined && VERSION.test(opts.version) ? { version: opts.version } : {};
    const body = { ...pick(license), receipt: opts.receipt ?? true, ...version, ...this.platform };
    const answer = await this.call<ValidAnswer>('/v1/licenses/validate', () =>
      this.api.POST('/v1/licenses/validate', { body, ...this.init() }),
    );
    if (answer.valid !== true || answer.effective_status !== 'valid') throw errorFromAnswer(200, answer);
    return answer;
  }

  /** Gives this site's seat back (docs/licensing.md, section 4); again is a success too. */
  async deactivate(
    input: { license_key: string } & (
      | { activation_id: number }
      | { domain: string; installation_id: string }
    ),
  ): Promise<DeactivateAnswer> {
    return this.call<DeactivateAnswer>('/v1/licenses/deactivate', () =>
      this.api.POST('/v1/licenses/deactivate', {
        body: only(input as Partial<License> & { license_key: string; activation_id?: number }, [
          'license_key',
          'activation_id',
          'domain',
          'installation_id',
        ]),
        ...this.init(),
      }),
    );
  }

  /**
   * The update check (docs/distribution.md, section 3). `eligible` with a `download_url`: hand the
   * answer to downloadAndVerify at once (the URL is single use and lives minutes; never keep it).
   */
  async check(input: CheckInput): Promise<CheckAnswer> {
    const body = {
      slug: input.slug,
      version: input.version,
      ...(input.channel === undefined ? {} : { channel: input.channel }),
      ...siteFields(input),
      ...this.platform,
    };
    return this.call<CheckAnswer>('/v1/software/check', () =>
      this.api.POST('/v1/software/check', { body, ...this.init() }),
    );
  }

  /** A fresh package for install, reinstall or update (docs/distribution.md, section 2). */
  async package(input: PackageInput): Promise<PackageAnswer> {
    const body = {
      slug: input.slug,
      purpose: input.purpose,
      ...(input.current_version === undefined ? {} : { current_version: input.current_version }),
      ...(input.channel === undefined ? {} : { channel: input.channel }),
      ...siteFields(input),
    };
    return this.call<PackageAnswer>('/v1/software/package', () =>
      this.api.POST('/v1/software/package', { body, ...this.init() }),
    );
  }

  /** The published changelog of a product (docs/distribution.md, section 6). */
  async changelog(slug: string, version?: string): Promise<ChangelogAnswer> {
    const query = version === undefined ? { slug } : { slug, version };
    return this.call<ChangelogAnswer>('/v1/software/changelog', () =>
      this.api.GET('/v1/software/changelog', { params: { query }, ...this.init() }),
    );
  }

  /**
   * The store's public keys (`GET /v1/software/signing-keys`), kept 5 minutes as the store's
   * Cache-Control allows; `refresh` fetches them again (a signature naming an unknown key).
   */
  async signingKeys(opts: { refresh?: boolean } = {}): Promise<SigningKey[]> {
    const at = this.now().getTime();
    if (!opts.refresh && this.keys && at - this.keys.at < KEYS_CACHE_MS && at >= this.keys.at) {
      return this.keys.list;
    }
    const answer = await this.call<{ keys: SigningKey[] }>('/v1/software/signing-keys', () =>
      this.api.GET('/v1/software/signing-keys', { ...this.init() }),
    );
    this.keys = { at, list: answer.keys };
    return answer.keys;
  }

  /**
   * Downloads a package answer's `download_url` to `destination` and checks it before it is
   * there: the size, the SHA-256 (the answer's `file_sha256` and the `X-Package-Sha256` header),
   * and the signature when the release carries one (`requireSignature` refuses one that does
   * not). A failed check removes what was written and throws TollgateError (docs/sdk-js.md).
   */
  async downloadAndVerify(
    pkg: DownloadablePackage,
    destination: string,
    opts: DownloadOptions = {},
  ): Promise<VerifiedDownload> {
    return download(pkg, destination, opts, {
      fetch: this.fetcher,
      keys: (refresh) => this.signingKeys({ refresh }),
    });
  }

  /**
   * Validates with the store and keeps the receipt of a valid answer in `storage`. When the store
   * cannot answer (a network error, a timeout, a 5xx, a 429) it answers from the stored receipt
   * while that verifies and is within its `valid_until`; otherwise it fails closed with
   * `grace_unavailable`. A refusal (403) is the store's answer: it removes the stored receipt and
   * is thrown as it is, as is any other 4xx.
   */
  async validateWithGrace(license: License, storage: ReceiptStorage): Promise<GraceResult> {
    let answer: ValidAnswer;
    try {
      answer = await this.validate(license, { receipt: true });
    } catch (e) {
      if (e instanceof TollgateError && e.code === 'signing_key_unavailable') {
        // The store answers, but cannot sign: its answer without a receipt is still an answer.
        return {
          valid: true,
          source: 'store',
          answer: await this.validate(license, { receipt: false }),
          claims: null,
        };
      }
      if (!(e instanceof TollgateError) || !e.unavailable) {
        if (e instanceof TollgateError && e.status === 403) await storage.clear();
        throw e;
      }
      return this.fromReceipt(license, storage, e);
    }
    return { valid: true, source: 'store', answer, claims: await this.keep(license, answer, storage) };
  }

  /** Verifies and stores a fresh receipt; a receipt that cannot be checked now is not kept. */
  private async keep(license: License, answer: ValidAnswer, storage: ReceiptStorage) {
    const receipt = answer.receipt;
    if (!receipt) return null;
    try {
      let keys = await this.signingKeys();
      if (!keys.some((k) => k.id === receipt.signing_key_id))
        keys = await this.signingKeys({ refresh: true });
      const claims = verifyReceipt(receipt, keys, { site: license, now: this.now() });
      await storage.save({ receipt, keys, saved_at: this.now().toISOString() });
      return claims;
    } catch {
      // The store said valid; a receipt that does not verify now (a key list that failed to load)
      // is dropped, and the one stored before stays.
      return null;
    }
  }

  private async fromReceipt(
    license: License,
    storage: ReceiptStorage,
    outage: TollgateError,
  ): Promise<GraceResult> {
    const stored = await storage.load();
    if (!stored) {
      throw new TollgateError('grace_unavailable', 'The store cannot be reached and no receipt is kept', {
        cause: outage,
      });
    }
    let claims: ReceiptClaims;
    try {
      claims = verifyReceipt(stored.receipt, stored.keys, { site: license, now: this.now() });
    } catch (why) {
      throw new TollgateError(
        'grace_unavailable',
        'The store cannot be reached and the kept receipt does not hold',
        {
          cause: why,
        },
      );
    }
    return { valid: true, source: 'receipt', claims, valid_until: claims.valid_until, error: outage };
  }

  /**
   * Every request's options: a timeout, and the body read as text, so that an answer that is not
   * JSON (a proxy's error page) is told apart from a network failure, with its status.
   */
  private init() {
    return { signal: AbortSignal.timeout(this.timeoutMs), parseAs: 'text' as const };
  }

  /**
   * One request: held back while a 429's `retry_after` runs, a network failure as `network_error`,
   * an answer that is not a success as the store's code.
   */
  private async call<T>(
    path: string,
    run: () => Promise<{ data?: unknown; error?: unknown; response: Response }>,
  ): Promise<T> {
    const group = BACKOFF_GROUP[path] ?? path;
    const now = this.now().getTime();
    const until = this.backoff.get(group);
    if (until !== undefined && now < until) {
      throw new TollgateError('rate_limited', 'The store asked to wait before asking again', {
        status: 429,
        retry_after: Math.ceil((until - now) / 1000),
      });
    }
    let result: { data?: unknown; error?: unknown; response: Response };
    try {
      result = await run();
    } catch (cause) {
      throw new TollgateError('network_error', 'The store could not be reached', { cause });
    }
    const { response } = result;
    const text = response.ok ? result.data : result.error;
    let body: unknown = null;
    try {
      body = typeof text === 'string' ? JSON.parse(text) : text;
    } catch {
      // Not JSON: told below as unexpected_response, with the status.
    }
    if (response.ok && isRecord(body)) return body as T;
    const error = response.ok
      ? new TollgateError('unexpected_response', 'The store answered without its JSON', {
          status: response.status,
        })
      : errorFromAnswer(response.status, body, response.headers.get('retry-after'));
    if (error.status === 429) {
      this.backoff.set(group, now + (error.retry_after ?? DEFAULT_RETRY_AFTER_S) * 1000);
    }
    throw error;
  }
}

/**
 * The fields a route takes, and no other: the routes refuse a field they do not know
 * (`invalid_parameters`), so an app's own object (its settings, with more in it) can be passed.
 */
function only<T extends object, K extends keyof T>(input: T, keys: readonly K[]): Pick<T, K> {
  const out = {} as Pick<T, K>;
  for (const key of keys) if (input[key] !== undefined) out[key] = input[key];
  return out;
}

function pick(license: License): License {
  return {
    license_key: license.license_key,
    domain: license.domain,
    installation_id: license.installation_id,
  };
}

/** The store's rules for the field report's fields (docs/distribution.md, section 12). */
const VERSION = /^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$/;
const HOST_VERSION = /^[0-9][0-9A-Za-z.+_-]{0,63}$/;
const PLATFORM = /^[a-z][a-z0-9_-]{0,31}$/;

/** The platform fields that follow the store's rules; a request with a malformed one would be refused. */
function platformFields(p: Platform | undefined): Partial<Platform> {
  if (!p || !PLATFORM.test(p.platform)) return {};
  return {
    platform: p.platform,
    ...(p.platform_version !== undefined && HOST_VERSION.test(p.platform_version)
      ? { platform_version: p.platform_version }
      : {}),
    ...(p.php_version !== undefined && HOST_VERSION.test(p.php_version)
      ? { php_version: p.php_version }
      : {}),
  };
}

/** The licensing fields of check and package, which name the site `site_url`. */
function siteFields(input: Partial<License>) {
  return {
    ...(input.license_key === undefined ? {} : { license_key: input.license_key }),
    ...(input.domain === undefined ? {} : { site_url: input.domain }),
    ...(input.installation_id === undefined ? {} : { installation_id: input.installation_id }),
  };
}
