import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { iso } from '../../src/clock.js';
import { TOKEN_RETENTION_MS } from '../../src/modules/distribution/tokens.js';
import { sha256 } from '../../src/random.js';
import { createTestApp, expectError, type TestApp } from '../helpers/app.js';
import { admin, call, download, issue, protectedFixture, settings, tokenOf } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { TEST_CLOCK: '1' } });
  await settings(t, { rate_limit: 100 });
});
afterAll(async () => t.close());

const db = () => t.app.services.database.db;
const issuer = () => t.app.services.distribution.issuer;
const exists = async (url: string) =>
  (await db()
    .selectFrom('download_tokens')
    .select('id')
    .where('token_hash', '=', sha256(tokenOf(url)))
    .executeTakeFirst()) !== undefined;
const advance = async (seconds: number) =>
  expect((await admin(t, 'POST', '/test-clock', { advance_seconds: seconds })).statusCode).toBe(200);
const count = async () =>
  Number(
    (
      await db()
        .selectFrom('download_tokens')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('download token retention', () => {
  it('deletes tokens expired for over 7 days, whatever their state, after a mint; newer ones stay', async () => {
    const f = await protectedFixture(t);
    const used = (await issue(t, f)).download_url;
    expect((await download(t, used)).statusCode).toBe(200);
    const unclaimed = (await issue(t, f)).download_url;
    const g = await protectedFixture(t);
    const invalidated = (await issue(t, g)).download_url;
    await call(t, 'POST', '/licenses/deactivate', { license_key: g.key, activation_id: g.activationId });
    const old = [used, unclaimed, invalidated];

    // Seven days after issuance they expired 7 days minus the 5-minute lifetime ago: all kept.
    await advance(TOKEN_RETENTION_MS / 1000);
    await issuer().prune();
    for (const url of old) expect(await exists(url)).toBe(true);
    expectError(await download(t, unclaimed), 403, 'token_expired');
    expectError(await download(t, used), 403, 'token_expired');

    // Past retention: the next mint prunes them (in the background, at most once an hour).
    await advance(6 * 60);
    const fresh = (await issue(t, f)).download_url;
    await vi.waitFor(async () => {
      for (const url of old) expect(await exists(url)).toBe(false);
    });
    expect(await exists(fresh)).toBe(true);
    expectError(await download(t, unclaimed), 403, 'invalid_token');
    expectError(await download(t, used), 403, 'invalid_token');
    expect((await download(t, fresh)).statusCode).toBe(200);
  });

  it('prunes a backlog in batches, oldest first, and stops at the first token still kept', async () => {
    await db().deleteFrom('download_tokens').execute();
    const now = t.app.services.clock.now().getTime();
    const row = (i: number, expiresAt: number) => ({
      token_hash: sha256(`backlog-${i}`),
      binding_version: 1,
      policy: 'public' as const,
      product_id: 1,
      release_id: 1,
      artifact_id: 1,
      artifact_sha256: 'a'.repeat(64),
      purpose: 'install' as const,
      created_at: iso(new Date(expiresAt - 300_000)),
      expires_at: iso(new Date(expiresAt)),
    });
    const long = now - TOKEN_RETENTION_MS - 60_000;
    // 1,234 past retention (more than two batches), then one still kept, then two more past it.
    const rows = Array.from({ length: 1234 }, (_, i) => row(i, long + i));
    rows.push(row(5000, now - TOKEN_RETENTION_MS + 60_000), row(5001, long), row(5002, long));
    for (let i = 0; i < rows.length; i += 200)
      await db()
        .insertInto('download_tokens')
        .values(rows.slice(i, i + 200))
        .execute();

    expect(await issuer().prune()).toBe(1234);
    expect(await count()).toBe(3);
    // Nothing at the head is past retention now: a prune reads one batch of the head and stops.
    expect(await issuer().prune()).toBe(0);
    expect(await count()).toBe(3);
  });
});
