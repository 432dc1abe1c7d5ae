import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isImportedHash, verifyPassword } from '../../src/modules/accounts/password.js';
import { createTestApp, expectError, type TestApp } from '../helpers/app.js';
import { createCustomer } from '../helpers/factories.js';

// Customers moved from a WordPress store keep their passwords (docs/migrating.md): the hashes
// below were made by WordPress's own code (wp-includes/class-phpass.php with PasswordHash(8, true);
// PHP's password_hash for bcrypt; WordPress 6.8's wp_hash_password, `$wp` + bcrypt over the
// base64 of HMAC-SHA384 with the key 'wp-sha384').
const HASHES = {
  phpass: ['correct horse 1', '$P$BI3f9Bdi.YCSy3YxYzOS0eHO5xVtBT0'],
  bcrypt: ['correct horse 2', '$2y$10$n71U/vRKOCgyvwqdG0KCK.S9e/9HawSOxTxjzaFNPK9vFEy4t2FEu'],
  wordpress68: ['correct horse 3', '$wp$2y$10$5s0qZxNGHTfbK8PwBnOLrOcoDESrLH8YWc68vTnGXyAVd/O/6hkge'],
} as const;

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const db = () => t.app.services.database.db;
const signIn = (email: string, password: string) =>
  t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { email, password } });

describe('passwords imported from WordPress', () => {
  it('each kind of hash checks its password and no other', async () => {
    for (const [password, hash] of Object.values(HASHES)) {
      expect(isImportedHash(hash)).toBe(true);
      expect(await verifyPassword(password, hash)).toBe(true);
      expect(await verifyPassword(`${password} `, hash)).toBe(false);
      expect(await verifyPassword('', hash)).toBe(false);
    }
    // Near misses are no hash of theirs: no password matches them.
    for (const bad of [
      '$P$B',
      '$P$!I3f9Bdi.YCSy3YxYzOS0eHO5xVtBT0',
      '$2y$10$short',
      '$wp$$2y$10$x',
      'md5$abc',
    ]) {
      expect(isImportedHash(bad)).toBe(false);
      expect(await verifyPassword('correct horse 1', bad)).toBe(false);
    }
  });

  for (const [kind, [password, hash]] of Object.entries(HASHES)) {
    it(`a customer with a ${kind} hash signs in with their password, and it is re-hashed once`, async () => {
      const customer = await createCustomer(t);
      await db()
        .updateTable('users')
        .set({ password_hash: hash, password_set: 1 })
        .where('id', '=', customer.id)
        .execute();
      expectError(await signIn(customer.email, `${password}!`), 401, 'invalid_credentials');
      const stillImported = await db()
        .selectFrom('users')
        .select('password_hash')
        .where('id', '=', customer.id)
        .executeTakeFirstOrThrow();
      expect(stillImported.password_hash).toBe(hash);

      const res = await signIn(customer.email, password);
      expect(res.statusCode, res.body).toBe(200);
      const after = await db()
        .selectFrom('users')
        .select('password_hash')
        .where('id', '=', customer.id)
        .executeTakeFirstOrThrow();
      expect(after.password_hash).toMatch(/^scrypt\$/);
      // The same password signs in again, now against Tollgate's own hash.
      expect((await signIn(customer.email, password)).statusCode).toBe(200);
    });
  }
});
