import type { Database } from '../../db/database.js';
import { type Tx, withTransaction } from '../../db/transaction.js';
import { ApiError } from '../../http/errors.js';
import type { Actor } from '../audit/audit.model.js';
import { diff } from '../audit/audit.model.js';
import type { AuditService } from '../audit/audit.service.js';
import type { SealedSecret, SealedSecretHolder, SecretVault } from '../vault/vault.module.js';
import type { SettingsRepository } from './settings.repository.js';
import {
  DEFAULT_SETTINGS,
  SEALED_SETTINGS,
  SECRET_MASK,
  type SealedSetting,
  type Settings,
  type SettingsPatch,
  SMTP_PASSWORD_MASK,
} from './settings.schemas.js';

/** How a sealed setting is stored: this prefix and the base64 of the vault's sealed bytes. */
const SEALED_PREFIX = 'sealed:';

const CAPTCHA_VERIFY_URLS: Record<string, string> = {
  turnstile: 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
  recaptcha: 'https://www.google.com/recaptcha/api/siteverify',
};

/** Settings whose values never reach the audit trail. */
const SECRET_SETTINGS = ['webhook_secret', 'captcha_secret', ...SEALED_SETTINGS] as const;

/**
 * smtp_url with its password replaced by SMTP_PASSWORD_MASK: what the API answers and the audit
 * trail records (docs/email.md, 'Connecting a mail server'). A URL that does not parse is masked whole.
 */
export function maskSmtpUrl(value: string): string {
  if (!value) return value;
  try {
    const url = new URL(value);
    if (!url.password) return value;
    url.password = SMTP_PASSWORD_MASK;
    return url.toString();
  } catch {
    return SMTP_PASSWORD_MASK;
  }
}

/** A patched smtp_url whose password is the mask keeps the stored password (the console sends back what it was shown). */
function restoreSmtpPassword(patched: string, stored: string): string {
  try {
    const url = new URL(patched);
    if (decodeURIComponent(url.password) !== SMTP_PASSWORD_MASK) return patched;
    const previous = stored ? new URL(stored) : null;
    url.password = previous?.password ?? '';
    return url.toString();
  } catch {
    return patched;
  }
}

/**
 * What runs inside the settings' transaction when the store changes mode (src/wiring.ts: going
 * live switches the test card off); throwing refuses the change.
 */
export type StoreModeHook = (mode: Settings['store_mode'], tx: Tx, actor?: Actor) => Promise<void>;

const clamp = (v: number, min: number, max: number) => Math.min(max, Math.max(min, v));

/**
 * The limits of docs/administration.md, 'Settings' (token_expiry 1–60, rate_limit 1–100) are
 * applied on write, so every reader sees legal values.
 */
function normalise(patch: SettingsPatch): SettingsPatch {
  const out = { ...patch };
  if (out.token_expiry !== undefined) out.token_expiry = clamp(out.token_expiry, 1, 60);
  if (out.rate_limit !== undefined) out.rate_limit = clamp(out.rate_limit, 1, 100);
  if (out.currencies) out.currencies = out.currencies.map((c) => ({ ...c, rate: String(c.rate) }));
  // Domains are compared normalised, which is lower-case (docs/licensing.md, '2.3 Staging and development sites').
  if (out.staging_patterns)
    out.staging_patterns = [...new Set(out.staging_patterns.map((p) => p.toLowerCase()))];
  // Each reminder day once, earliest reminder first (the expiry scan walks them in this order).
  if (out.renewal_reminder_days)
    out.renewal_reminder_days = [...new Set(out.renewal_reminder_days)].sort((a, b) => b - a);
  return out;
}

/**
 * Store settings, read by every module through this one service. Reads are cached for a second
 * (other server processes see a change within that), and a write here clears the cache at once.
 */
export class SettingsService implements SealedSecretHolder {
  private cached: { at: number; value: Settings } | null = null;
  /** Counts writes: a read that a write overtook must not refill the cache with what it read. */
  private generation = 0;
  /** The read that callers finding the cache stale wait for, and the generation it began in. */
  private reading: { generation: number; value: Promise<Settings> } | null = null;
  static readonly CACHE_MS = 1000;
  private readonly modeHooks: StoreModeHook[] = [];

  constructor(
    private readonly database: Pick<Database, 'db'>,
    private readonly repo: SettingsRepository,
    private readonly audit: AuditService,
    private readonly vault: SecretVault,
  ) {}

  onStoreModeChanged(hook: StoreModeHook): void {
    this.modeHooks.push(hook);
  }

  /**
   * The cached settings while they are fresh, else null (then `get`). For the hot paths (validate,
   * the update check, token issuance): `current() ?? (await get())` costs no promise and no
   * microtask while the cache holds, which is every request but one a second
   * (docs/performance.md, 'Settings read without a promise').
   */
  current(): Settings | null {
    const cached = this.cached;
    return cached && Date.now() - cached.at < SettingsService.CACHE_MS ? cached.value : null;
  }

  /** With `tx`, a cached value or a read inside the caller's transaction (SQLite has one connection). */
  async get(tx?: Tx): Promise<Settings> {
    const now = Date.now();
    if (this.cached && now - this.cached.at < SettingsService.CACHE_MS) return this.cached.value;
    if (tx) return this.read(now, tx);
    // The requests that find the cache stale share one read, unless a write came after it began:
    // on a busy store every request in flight would otherwise read the settings at the same moment.
    if (this.reading?.generation !== this.generation) {
      const reading = { generation: this.generation, value: this.read(now) };
      const done = () => {
        if (this.reading === reading) this.reading = null;
      };
      reading.value.then(done, done);
      this.reading = reading;
    }
    return this.reading.value;
  }

  private async read(now: number, tx?: Tx): Promise<Settings> {
    const generation = this.generation;
    const value = await this.readIn(tx);
    // On PostgreSQL a read can start before a write commits and end after it: caching what it
    // read would hide the change for a second (a webhook sent to the previous URL, say).
    if (generation === this.generation) this.cached = { at: now, value };
    return value;
  }

  /** The stored settings, past the cache (as of `tx` when given: the audit's before). */
  private async readIn(tx?: Tx): Promise<Settings> {
    const value: Settings = structuredClone(DEFAULT_SETTINGS);
    for (const row of await this.repo.readAll(tx)) {
      if (Object.hasOwn(DEFAULT_SETTINGS, row.key))
        (value as Record<string, unknown>)[row.key] = JSON.parse(row.value);
    }
    return value;
  }

  /** The captcha verification endpoint: the configured one, else the provider's own. */
  static captchaVerifyUrl(s: Settings): string {
    return s.captcha_verify_url || CAPTCHA_VERIFY_URLS[s.captcha_provider] || '';
  }

  /** The settings as the API shows them: the SMTP password masked, a sealed secret only as set or not. */
  async view(): Promise<Settings> {
    const value = await this.get();
    const shown = { ...value, smtp_url: maskSmtpUrl(value.smtp_url) };
    for (const key of SEALED_SETTINGS) shown[key] = value[key] ? SECRET_MASK : '';
    return shown;
  }

  /**
   * The plaintext of a sealed setting ('' when not set); only the module that uses it asks. Sealed
   * with a key that is no longer configured (or damaged), it is 500 `vault_key_unavailable`.
   */
  async secret(key: SealedSetting, tx?: Tx): Promise<string> {
    const stored = (await this.get(tx))[key];
    if (!stored.startsWith(SEALED_PREFIX)) return '';
    let plain: Buffer;
    try {
      plain = await this.vault.openSecret(Buffer.from(stored.slice(SEALED_PREFIX.length), 'base64'));
    } catch {
      throw new ApiError('vault_key_unavailable');
    }
    return plain.toString('utf8');
  }

  // ---- the sealed settings, for rotate-key (docs/releases.md, 'Rotating the key') ----

  readonly sealedName = 'settings' as const;

  /** The sealed settings that are set, read past the cache. */
  async sealedSecrets(): Promise<SealedSecret[]> {
    const value = await this.readIn();
    return SEALED_SETTINGS.filter((key) => value[key].startsWith(SEALED_PREFIX)).map((key) => ({
      id: key,
      entityId: 0,
      field: key,
      sealed: Buffer.from(value[key].slice(SEALED_PREFIX.length), 'base64'),
    }));
  }

  /** The same secret sealed anew, stored only if the setting still holds `before`. */
  async replaceSealed(id: string, before: Buffer, after: Buffer, tx: Tx): Promise<boolean> {
    const key = SEALED_SETTINGS.find((k) => k === id);
    if (!key || (await this.readIn(tx))[key] !== `${SEALED_PREFIX}${before.toString('base64')}`) return false;
    this.generation++;
    await this.repo.put(key, JSON.stringify(`${SEALED_PREFIX}${after.toString('base64')}`), tx);
    this.cached = null;
    return true;
  }

  /** `actor` is the administrator who asked (the route passes it); a change by the server itself has none and is not recorded. */
  async update(patch: SettingsPatch, actor?: Actor): Promise<Settings> {
    const normalised = normalise(patch);
    // Sealed before the transaction: the vault may read or create its key file. The mask keeps
    // what is stored, as the console sends back what it was shown.
    for (const key of SEALED_SETTINGS) {
      const value = normalised[key];
      if (value === SECRET_MASK) delete normalised[key];
      else if (value) {
        const sealed = await this.vault.sealSecret(Buffer.from(value, 'utf8'));
        normalised[key] = `${SEALED_PREFIX}${sealed.toString('base64')}`;
      }
    }
    const entries = Object.entries(normalised);
    this.generation++;
    if (entries.length > 0) {
      await withTransaction(this.database, async (tx) => {
        const before = await this.readIn(tx);
        if (typeof normalised.smtp_url === 'string') {
          normalised.smtp_url = restoreSmtpPassword(normalised.smtp_url, before.smtp_url);
        }
        for (const [key, v] of Object.entries(normalised)) await this.repo.put(key, JSON.stringify(v), tx);
        const mode = normalised.store_mode;
        if (mode !== undefined && mode !== before.store_mode) {
          for (const hook of this.modeHooks) await hook(mode, tx, actor);
        }
        const changes = diff(before as Record<string, unknown>, normalised as Record<string, unknown>);
        // A secret is recorded as changed, never with its value (docs/admin.md, 'Audit trail').
        for (const key of SECRET_SETTINGS) {
          if (changes[key]) changes[key] = { before: '[redacted]', after: '[redacted]' };
        }
        if (changes.smtp_url) {
          changes.smtp_url = {
            before: maskSmtpUrl(before.smtp_url),
            after: maskSmtpUrl(normalised.smtp_url ?? ''),
          };
        }
        if (actor && Object.keys(changes).length > 0) {
          await this.audit.record(
            actor,
            { entity_type: 'settings', entity_id: 0, action: 'update', changes },
            tx,
          );
        }
      });
    }
    this.generation++;
    this.cached = null;
    return this.get();
  }
}
