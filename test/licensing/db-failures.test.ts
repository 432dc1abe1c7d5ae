import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import type { Database } from '../../src/db/database.js';
import type { DB } from '../../src/db/schema.js';
import type { Tx } from '../../src/db/transaction.js';
import type { App } from '../../src/http/types.js';
import { LicenseRepository, type NewActivation } from '../../src/modules/licensing/license.repository.js';
import type { ActivationEnvironment } from '../../src/modules/licensing/licensing.tables.js';
import { createTestApp, expectError, type TestApp } from '../helpers/app.js';
import { identity, licenseFixture } from '../helpers/factories.js';

const injected = (step: string) => new Error(`injected database failure at ${step}`);

/** Calls on the proxy reach the real object (Kysely's classes keep private fields). */
const forward = (target: object, prop: string | symbol) => {
  const value = Reflect.get(target, prop, target);
  return typeof value === 'function' ? value.bind(target) : value;
};

/**
 * The database a transaction begins on, except that beginning or committing it throws the way a
 * broken database would when `failAt()` names that step.
 */
function failingTransactions(db: Kysely<DB>, failAt: () => string | null): Kysely<DB> {
  const refuse = (step: string) => ({ execute: () => Promise.reject(injected(step)) });
  const begin = () => {
    if (failAt() === 'begin') return refuse('begin');
    return {
      execute: async () =>
        new Proxy(await db.startTransaction().execute(), {
          get: (tx, prop) =>
            prop === 'commit' && failAt() === 'commit' ? () => refuse('commit') : forward(tx, prop),
        }),
    };
  };
  return new Proxy(db, {
    get: (target, prop) => (prop === 'startTransaction' ? begin : forward(target, prop)),
  });
}

/** The real repository, except that the step named in `failAt` throws the way a broken database would. */
class FailingRepository extends LicenseRepository {
  failAt: string | null = null;
  /** Where the licensing services open their transactions: begin and commit fail there. */
  override readonly database: Database;
  constructor(database: Database) {
    super(database);
    this.database = { ...database, db: failingTransactions(database.db, () => this.failAt) };
  }
  private check(step: string) {
    if (this.failAt === step) throw injected(step);
  }
  override async lockLicense(id: number, tx?: Tx) {
    this.check('lock');
    return super.lockLicense(id, tx);
  }
  override async countActive(licenseId: number, environment: ActivationEnvironment, tx?: Tx) {
    if (environment === 'production') this.check('count');
    return super.countActive(licenseId, environment, tx);
  }
  override async insertActivation(values: NewActivation, tx?: Tx) {
    this.check('insert');
    return super.insertActivation(values, tx);
  }
  override async findActivation(licenseId: number, activationId: number, tx?: Tx) {
    this.check('find');
    return super.findActivation(licenseId, activationId, tx);
  }
  override async deactivateActivation(id: number, now: string, tx?: Tx) {
    this.check('deactivate');
    return super.deactivateActivation(id, now, tx);
  }
  override async revoke(id: number, now: string, tx?: Tx) {
    this.check('revoke');
    return super.revoke(id, now, tx);
  }
}

let t: TestApp;
let app: App;
let repo: FailingRepository;
beforeAll(async () => {
  t = await createTestApp();
  repo = new FailingRepository(t.db.database);
  // A second app on the same database whose licensing services were given the failing repository.
  app = await buildApp(t.config, t.db.database, { licenseRepository: repo });
});
afterAll(async () => {
  await app.close();
  await t.close();
});

const db = () => t.app.services.database.db;
const call = (url: string, payload: unknown) =>
  app.inject({ method: 'POST', url: `/v1${url}`, payload: payload as object });
const activations = async (licenseId: number) =>
  db().selectFrom('activations').selectAll().where('license_id', '=', licenseId).execute();

describe('activation: database failures name their step and store nothing', () => {
  const steps: [string, string][] = [
    ['begin', 'activation_transaction_failed'],
    ['lock', 'activation_read_failed'],
    ['count', 'activation_read_failed'],
    ['insert', 'activation_write_failed'],
    ['commit', 'activation_commit_failed'],
  ];
  for (const [step, code] of steps) {
    it(`failure at ${step} -> 500 ${code}`, async () => {
      const { key, license } = await licenseFixture(t, { activation_limit: 2 });
      const site = identity();
      repo.failAt = step;
      try {
        expectError(await call('/licenses/activate', { license_key: key, ...site }), 500, code);
      } finally {
        repo.failAt = null;
      }
      expect(await activations(license.id)).toHaveLength(0);
      // The connection was released: the same request now succeeds.
      const ok = await call('/licenses/activate', { license_key: key, ...site });
      expect(ok.statusCode).toBe(200);
      expect(await activations(license.id)).toHaveLength(1);
    });
  }

  it('the 500 body carries no driver detail', async () => {
    const { key } = await licenseFixture(t);
    repo.failAt = 'insert';
    try {
      const res = await call('/licenses/activate', { license_key: key, ...identity() });
      expect(res.body).not.toContain('injected');
      expect(res.body).not.toContain(key);
    } finally {
      repo.failAt = null;
    }
  });
});

describe('deactivation: database failures name their step and deactivate nothing', () => {
  const steps: [string, string][] = [
    ['begin', 'deactivation_transaction_failed'],
    ['lock', 'deactivation_read_failed'],
    ['find', 'deactivation_read_failed'],
    ['deactivate', 'deactivation_write_failed'],
    ['commit', 'deactivation_commit_failed'],
  ];
  for (const [step, code] of steps) {
    it(`failure at ${step} -> 500 ${code}`, async () => {
      const { key, license } = await licenseFixture(t);
      const act = (await call('/licenses/activate', { license_key: key, ...identity() })).json();
      repo.failAt = step;
      try {
        expectError(
          await call('/licenses/deactivate', { license_key: key, activation_id: act.activation_id }),
          500,
          code,
        );
      } finally {
        repo.failAt = null;
      }
      expect((await activations(license.id))[0]).toMatchObject({ status: 'active', activation_revision: 1 });
      expect(
        (await call('/licenses/deactivate', { license_key: key, activation_id: act.activation_id }))
          .statusCode,
      ).toBe(200);
      expect((await activations(license.id))[0]!.status).toBe('deactivated');
    });
  }
});

describe('revocation: a failed write is 500 revoke_failed with no status change and no event', () => {
  for (const step of ['begin', 'revoke', 'commit']) {
    it(`failure at ${step} -> 500 revoke_failed`, async () => {
      const { license } = await licenseFixture(t);
      repo.failAt = step;
      try {
        expectError(
          await app.inject({ method: 'DELETE', url: `/v1/licenses/${license.id}`, headers: t.adminAuth }),
          500,
          'revoke_failed',
        );
      } finally {
        repo.failAt = null;
      }
      const row = await db()
        .selectFrom('licenses')
        .select('status')
        .where('id', '=', license.id)
        .executeTakeFirstOrThrow();
      expect(row.status).toBe('active');
      const events = await db()
        .selectFrom('webhook_events')
        .select('payload')
        .where('event', '=', 'license.revoked')
        .execute();
      expect(events.filter((e) => JSON.parse(e.payload).data.license_id === license.id)).toHaveLength(0);
      expect(
        (await app.inject({ method: 'DELETE', url: `/v1/licenses/${license.id}`, headers: t.adminAuth }))
          .statusCode,
      ).toBe(200);
    });
  }
});
