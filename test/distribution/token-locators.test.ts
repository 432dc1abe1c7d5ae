import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppSecrets } from '../../src/db/app-secrets.js';
import { AppStateRepository } from '../../src/db/app-state.repository.js';
import { TokenBearers } from '../../src/modules/distribution/bearer.js';
import { randomHex, sha256 } from '../../src/random.js';
import { createTestApp, expectError, setSettings, type TestApp } from '../helpers/app.js';
import { download, issue, protectedFixture, tokenOf } from './helpers.js';

// The download token's bearer and the locator its row is found under (docs/distribution.md, 'What a
// token is'; src/modules/distribution/bearer.ts), on the database under test.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
  await setSettings(t, { rate_limit: 100 });
});
afterAll(async () => t.close());

const db = () => t.app.services.database.db;
const rowOf = (bearer: string) =>
  db().selectFrom('download_tokens').selectAll().where('token_hash', '=', sha256(bearer)).executeTakeFirst();
/** Another process on the same database, or this one after a restart: its own secret loader. */
const otherProcess = () => new TokenBearers(new AppSecrets(new AppStateRepository(db())));

describe('download token locators', () => {
  it('a bearer is 64 hex characters; its row holds its hash and the time it names, never the bearer', async () => {
    const f = await protectedFixture(t);
    const before = Date.now();
    const bearers = await Promise.all(
      [issue(t, f), issue(t, f)].map(async (p) => tokenOf((await p).download_url)),
    );
    for (const bearer of bearers) {
      expect(bearer).toMatch(/^[0-9a-f]{64}$/);
      const row = await rowOf(bearer);
      expect(row?.token_locator).toBeGreaterThanOrEqual(before);
      expect(row?.token_locator).toBeLessThanOrEqual(Date.now());
      expect(JSON.stringify(row)).not.toContain(bearer);
      // Another process reads the same secret from the database and finds the same row.
      expect(await otherProcess().locate(bearer)).toBe(row?.token_locator);
    }
    // Two bearers of the same moment share no half: the time is encrypted with random bytes.
    expect(bearers[0]!.slice(0, 32)).not.toBe(bearers[1]!.slice(0, 32));
    expect(bearers[0]!.slice(32)).not.toBe(bearers[1]!.slice(32));
  });

  it('a bearer with either half changed finds no token: invalid_token, and the token stays unclaimed', async () => {
    const f = await protectedFixture(t);
    const bearer = tokenOf((await issue(t, f)).download_url);
    const flip = (s: string, at: number) => s.slice(0, at) + (s[at] === '0' ? '1' : '0') + s.slice(at + 1);
    for (const changed of [flip(bearer, 0), flip(bearer, 31), flip(bearer, 32), flip(bearer, 63)]) {
      expectError(await download(t, `http://x/v1/software/download?token=${changed}`), 403, 'invalid_token');
    }
    expect((await rowOf(bearer))?.used_at).toBeNull();
    expect((await download(t, `http://x/v1/software/download?token=${bearer}`)).statusCode).toBe(200);
  });

  it('a token minted before locators (none stored) is found by its hash, once', async () => {
    const f = await protectedFixture(t);
    const minted = await rowOf(tokenOf((await issue(t, f)).download_url));
    // A row as the build before wrote it: the hash of 32 random bytes, no locator.
    const old = randomHex(32);
    const { id: _id, ...columns } = minted!;
    await db()
      .insertInto('download_tokens')
      .values({ ...columns, token_hash: sha256(old), token_locator: null })
      .execute();
    const url = `http://x/v1/software/download?token=${old}`;
    expect((await download(t, url)).statusCode).toBe(200);
    expectError(await download(t, url), 403, 'token_consumed');
  });

  it('a locator alone finds nothing: the hash must match too', async () => {
    const f = await protectedFixture(t);
    const bearer = tokenOf((await issue(t, f)).download_url);
    const row = await rowOf(bearer);
    // A bearer of the same moment but other random bytes: its locator is the row's, its hash is not.
    const bearers = otherProcess();
    await bearers.load();
    const same = bearers.mint(row!.token_locator!).bearer;
    expect(await bearers.locate(same)).toBe(row!.token_locator);
    expectError(await download(t, `http://x/v1/software/download?token=${same}`), 403, 'invalid_token');
  });
});
