import type Database from 'better-sqlite3';
// Tollgate's choice of better-sqlite3 for the running Node.js, so the receiver runs on every Node.js
// Tollgate's suite does; in your own project, import better-sqlite3 and call `new Database(file)`.
import { openSqlite } from '../../src/db/sqlite.js';

export interface LocalLicense {
  store: string;
  license_id: number;
  subscription_id: number | null;
  license_key: string;
  domain: string;
  installation_id: string;
}

export interface InboxRow {
  id: number;
  store: string;
  event_id: string;
  event: string;
  payload: string;
  attempts: number;
}

/**
 * The receiver's own SQLite database: the inbox of accepted events (unique per store and event id),
 * the mapping from the store's numeric license ids to this side's keys and sites (rule 6 of
 * docs/webhooks.md: the payload carries no key), and the last validation result of each license.
 */
export class ReceiverStore {
  readonly db: Database.Database;

  constructor(file: string, opts: { busyTimeoutMs?: number } = {}) {
    this.db = openSqlite(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    this.db.pragma(`busy_timeout = ${opts.busyTimeoutMs ?? 5000}`);
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS inbox (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        store TEXT NOT NULL,
        event_id TEXT NOT NULL,
        event TEXT NOT NULL,
        payload TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'pending',
        attempts INTEGER NOT NULL DEFAULT 0,
        next_try_at INTEGER NOT NULL DEFAULT 0,
        last_error TEXT,
        received_at TEXT NOT NULL,
        processed_at TEXT,
        UNIQUE (store, event_id)
      );
      CREATE INDEX IF NOT EXISTS inbox_pending ON inbox (status, next_try_at);
      CREATE TABLE IF NOT EXISTS licenses (
        store TEXT NOT NULL,
        license_id INTEGER NOT NULL,
        subscription_id INTEGER,
        license_key TEXT NOT NULL,
        domain TEXT NOT NULL,
        installation_id TEXT NOT NULL,
        valid INTEGER,
        effective_status TEXT,
        checked_at TEXT,
        PRIMARY KEY (store, license_id)
      );
      CREATE INDEX IF NOT EXISTS licenses_subscription ON licenses (store, subscription_id);
    `);
  }

  /**
   * Rule 4 (docs/webhooks.md): persists the full payload as a pending row and commits. Returns
   * false for a duplicate (the unique constraint on store and event id). Throws when the write or
   * commit fails.
   */
  acceptEvent(store: string, eventId: string, event: string, payload: string): boolean {
    const insert = this.db.prepare(
      `INSERT INTO inbox (store, event_id, event, payload, received_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (store, event_id) DO NOTHING`,
    );
    return this.db.transaction(
      () => insert.run(store, eventId, event, payload, new Date().toISOString()).changes === 1,
    )();
  }

  duePending(limit: number): InboxRow[] {
    return this.db
      .prepare(
        `SELECT id, store, event_id, event, payload, attempts FROM inbox
         WHERE status = 'pending' AND next_try_at <= ? ORDER BY id LIMIT ?`,
      )
      .all(Date.now(), limit) as InboxRow[];
  }

  markDone(id: number): void {
    this.db
      .prepare(`UPDATE inbox SET status = 'done', last_error = NULL, processed_at = ? WHERE id = ?`)
      .run(new Date().toISOString(), id);
  }

  retryLater(id: number, error: string, attempts: number, at: number, giveUp: boolean): void {
    this.db
      .prepare(`UPDATE inbox SET status = ?, attempts = ?, next_try_at = ?, last_error = ? WHERE id = ?`)
      .run(giveUp ? 'failed' : 'pending', attempts, at, error.slice(0, 500), id);
  }

  upsertLicense(l: LocalLicense): void {
    this.db
      .prepare(
        `INSERT INTO licenses (store, license_id, subscription_id, license_key, domain, installation_id)
         VALUES (@store, @license_id, @subscription_id, @license_key, @domain, @installation_id)
         ON CONFLICT (store, license_id) DO UPDATE SET subscription_id = excluded.subscription_id,
           license_key = excluded.license_key, domain = excluded.domain, installation_id = excluded.installation_id`,
      )
      .run(l);
  }

  licenseById(store: string, licenseId: number): LocalLicense[] {
    return this.db
      .prepare('SELECT * FROM licenses WHERE store = ? AND license_id = ?')
      .all(store, licenseId) as LocalLicense[];
  }

  /**
   * Rule 5 (docs/webhooks.md): every local license mapped to the subscription, for that store only.
   */
  licensesBySubscription(store: string, subscriptionId: number): LocalLicense[] {
    return this.db
      .prepare('SELECT * FROM licenses WHERE store = ? AND subscription_id = ? ORDER BY license_id')
      .all(store, subscriptionId) as LocalLicense[];
  }

  saveValidation(store: string, licenseId: number, valid: boolean, effectiveStatus: string): void {
    this.db
      .prepare(
        'UPDATE licenses SET valid = ?, effective_status = ?, checked_at = ? WHERE store = ? AND license_id = ?',
      )
      .run(valid ? 1 : 0, effectiveStatus, new Date().toISOString(), store, licenseId);
  }

  close(): void {
    this.db.close();
  }
}
