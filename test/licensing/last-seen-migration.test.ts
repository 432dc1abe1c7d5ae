import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/db/migrate.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';
import { installationId, seedOwnedLicense } from '../helpers/factories.js';

/**
 * Migration 2026112596_activation_last_seen on a store that already has activations: each starts
 * from its activation time, or from the newest download token its site was given when that is later
 * (docs/licensing.md, 'Last seen and stale activations').
 */
let d: TestDatabase;
beforeAll(async () => {
  d = await freshDatabase({ upTo: '2026112593_software_images' });
});
afterAll(async () => d.drop());

describe('migration 2026112596_activation_last_seen', () => {
  it('backfills last_seen_at from the activation time or the newest token, whichever is later', async () => {
    const db = d.database.db;
    const license = await seedOwnedLicense(db, { limit: 0 });
    // biome-ignore lint/suspicious/noExplicitAny: the columns of the schema before the migration
    const old = db as any;
    const activation = async (domain: string, activatedAt: string, status = 'active') =>
      (
        await old
          .insertInto('activations')
          .values({
            license_id: license.licenseId,
            identity_key: `${domain}-${installationId()}`,
            domain,
            domain_normalized: domain,
            installation_id: installationId(),
            ip_address: '127.0.0.1',
            machine_id: null,
            user_agent: 'test',
            status,
            activated_at: activatedAt,
            deactivated_at: status === 'active' ? null : '2026-06-01T00:00:00.000Z',
            activation_revision: 1,
            updated_at: activatedAt,
          })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id as number;
    const token = (activationId: number | null, createdAt: string) =>
      old
        .insertInto('download_tokens')
        .values({
          token_hash: `${Math.random()}`.padEnd(64, '0'),
          binding_version: 1,
          policy: activationId === null ? 'public' : 'protected',
          product_id: 1,
          release_id: 1,
          artifact_id: 1,
          artifact_sha256: 'a'.repeat(64),
          purpose: 'update',
          license_id: activationId === null ? null : license.licenseId,
          activation_id: activationId,
          activation_revision: activationId === null ? null : 1,
          identity_key: null,
          installation_id: null,
          domain_normalized: null,
          created_at: createdAt,
          expires_at: createdAt,
          used_at: null,
          invalidated_at: null,
          invalidated_reason: null,
        })
        .execute();

    const noTokens = await activation('quiet.example', '2026-01-01T00:00:00.000Z');
    const withTokens = await activation('busy.example', '2026-01-01T00:00:00.000Z');
    await token(withTokens, '2026-03-01T10:00:00.000Z');
    await token(withTokens, '2026-05-02T11:30:00.000Z');
    await token(withTokens, '2026-04-01T10:00:00.000Z');
    // A token older than the activation (it cannot be, but the later time wins all the same).
    const reactivated = await activation('back.example', '2026-07-01T00:00:00.000Z');
    await token(reactivated, '2026-02-01T00:00:00.000Z');
    const gone = await activation('gone.example', '2026-01-05T00:00:00.000Z', 'deactivated');
    await token(null, '2026-08-01T00:00:00.000Z');

    await migrateToLatest(db, d.database.dialect);

    const rows = await db.selectFrom('activations').select(['id', 'last_seen_at']).execute();
    const seen = Object.fromEntries(rows.map((r) => [r.id, r.last_seen_at]));
    expect(seen).toEqual({
      [noTokens]: '2026-01-01T00:00:00.000Z',
      [withTokens]: '2026-05-02T11:30:00.000Z',
      [reactivated]: '2026-07-01T00:00:00.000Z',
      [gone]: '2026-01-05T00:00:00.000Z',
    });
  });
});
