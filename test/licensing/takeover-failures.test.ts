import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import type { Tx } from '../../src/db/transaction.js';
import type { App } from '../../src/http/types.js';
import { LicenseRepository } from '../../src/modules/licensing/license.repository.js';
import type { ActivationEnvironment } from '../../src/modules/licensing/licensing.tables.js';
import { createTestApp, expectError, setSettings, type TestApp } from '../helpers/app.js';
import { identity, licenseFixture } from '../helpers/factories.js';

/**
 * The steps staging and reinstalls add to activation (docs/licensing.md, '2.3', '2.4') fail as the
 * others do: with the step's code, and nothing stored or taken over.
 */
class FailingRepository extends LicenseRepository {
  failAt: string | null = null;
  private check(step: string) {
    if (this.failAt === step) throw new Error(`injected database failure at ${step}`);
  }
  override async countActive(licenseId: number, environment: ActivationEnvironment, tx?: Tx) {
    if (environment === 'staging') this.check('staging');
    return super.countActive(licenseId, environment, tx);
  }
  override async findActiveOnDomain(licenseId: number, domain: string, tx?: Tx) {
    this.check('domain');
    return super.findActiveOnDomain(licenseId, domain, tx);
  }
  override async markTakenOver(id: number, replacedBy: number, now: string, tx?: Tx) {
    this.check('takeover');
    return super.markTakenOver(id, replacedBy, now, tx);
  }
}

let t: TestApp;
let app: App;
let repo: FailingRepository;
beforeAll(async () => {
  t = await createTestApp();
  repo = new FailingRepository(t.db.database);
  app = await buildApp(t.config, t.db.database, { licenseRepository: repo });
  await setSettings(t, { reinstall_takeover: true });
});
afterAll(async () => {
  await app.close();
  await t.close();
});

const activate = (payload: unknown) =>
  app.inject({ method: 'POST', url: '/v1/licenses/activate', payload: payload as object });
const rows = (licenseId: number) =>
  t.app.services.database.db
    .selectFrom('activations')
    .select(['status', 'deactivation_reason'])
    .where('license_id', '=', licenseId)
    .orderBy('id')
    .execute();

describe('staging and takeover steps: database failures', () => {
  it.each([
    ['staging', 'staging.fail.example.com', 'activation_read_failed'],
    ['domain', 'fail.example.com', 'activation_read_failed'],
    ['takeover', 'fail.example.com', 'activation_write_failed'],
  ])('failure at %s (%s) -> 500 %s, nothing stored or taken over', async (step, domain, code) => {
    const { key, license } = await licenseFixture(t, { activation_limit: 1 });
    expect((await activate({ license_key: key, ...identity(domain) })).statusCode).toBe(200);
    repo.failAt = step;
    try {
      const res = await activate({ license_key: key, ...identity(domain) });
      expectError(res, 500, code);
      expect(res.body).not.toContain('injected');
    } finally {
      repo.failAt = null;
    }
    expect(await rows(license.id)).toEqual([{ status: 'active', deactivation_reason: null }]);
    // The connection was released: the same request now succeeds and takes the site over.
    expect((await activate({ license_key: key, ...identity(domain) })).statusCode).toBe(200);
    expect((await rows(license.id)).map((r) => r.status)).toEqual(['deactivated', 'active']);
  });
});
