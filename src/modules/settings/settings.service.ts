import type { Database } from '../../db/database.js';
import { type Tx, withTransaction } from '../../db/transaction.js';
import type { Actor } from '../audit/audit.model.js';
import { diff } from '../audit/audit.model.js';
import type { AuditService } from '../audit/audit.service.js';
import type { SettingsRepository } from './settings.repository.js';
import { DEFAULT_SETTINGS, type Settings, type SettingsPatch } from './settings.schemas.js';

const CAPTCHA_VERIFY_URLS: Record<string, string> = {
  turnstile: 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
  recaptcha: 'https://www.google.com/recaptcha/api/siteverify',
};

/** Settings whose values never reach the audit trail. */
const SECRET_SETTINGS = ['webhook_secret', 'captcha_secret'] as const;

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
  return out;
}

/**
 * Store settings, read by every module through this one service. Reads are cached for a second
 * (other server processes see a change within that), and a write here clears the cache at once.
 */
export class SettingsService {
  private cached: { at: number; value: Settings } | null = null;
  /** Counts writes: a read that a write overtook must not refill the cache with what it read. */
  private generation = 0;
  static readonly CACHE_MS = 1000;

  constructor(
    private readonly database: Pick<Database, 'db'>,
    private readonly repo: SettingsRepository,
    private readonly audit: AuditService,
  ) {}

  /** With `tx`, a cached value or a read inside the caller's transaction (SQLite has one connection). */
  async get(tx?: Tx): Promise<Settings> {
    const now = Date.now();
    if (this.cached && now - this.cached.at < SettingsService.CACHE_MS) return this.cached.value;
    const generation = this.generation;
    const rows = await this.repo.readAll(tx);
    const value: Settings = structuredClone(DEFAULT_SETTINGS);
    for (const row of rows) {
      if (Object.hasOwn(DEFAULT_SETTINGS, row.key))
        (value as Record<string, unknown>)[row.key] = JSON.parse(row.value);
    }
    // On PostgreSQL a read can start before a write commits and end after it: caching what it
    // read would hide the change for a second (a webhook sent to the previous URL, say).
    if (generation === this.generation) this.cached = { at: now, value };
    return value;
  }

  /** The stored settings as of this transaction, past the cache (the audit's before). */
  private async readIn(tx: Tx): Promise<Settings> {
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

  /** `actor` is the administrator who asked (the route passes it); a change by the server itself has none and is not recorded. */
  async update(patch: SettingsPatch, actor?: Actor): Promise<Settings> {
    const normalised = normalise(patch);
    const entries = Object.entries(normalised);
    this.generation++;
    if (entries.length > 0) {
      await withTransaction(this.database, async (tx) => {
        const before = await this.readIn(tx);
        for (const [key, v] of entries) await this.repo.put(key, JSON.stringify(v), tx);
        const changes = diff(before as Record<string, unknown>, normalised as Record<string, unknown>);
        // A secret is recorded as changed, never with its value (docs/admin.md, 'Audit trail').
        for (const key of SECRET_SETTINGS) {
          if (changes[key]) changes[key] = { before: '[redacted]', after: '[redacted]' };
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
