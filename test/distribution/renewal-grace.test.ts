import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  admin,
  advanceClock,
  createTestApp,
  expectError,
  setSettings,
  type TestApp,
} from '../helpers/app.js';
import { setLicenseColumns } from '../helpers/factories.js';
import { call, download, issue, pkg, protectedFixture } from './helpers.js';

// renewal_grace_days: update checks, packages and downloads keep flowing for a license whose
// period ended less than that many days ago (docs/licensing.md, 'Renewal grace').
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { TEST_CLOCK: '1' } });
  await setSettings(t, { rate_limit: 1000 });
});
afterAll(async () => t.close());

const db = () => t.app.services.database.db;
const DAY = 86_400;
const clockNow = async () => new Date((await admin(t, 'GET', '/test-clock')).json().now as string);
const inAnHour = async () => new Date((await clockNow()).getTime() + 3_600_000).toISOString();

describe('renewal_grace_days', () => {
  it('defaults to 0 and takes 0-365 only, changing nothing otherwise', async () => {
    expect((await admin(t, 'GET', '/settings')).json().renewal_grace_days).toBe(0);
    for (const bad of [-1, 366, '3', 1.5, null]) {
      expectError(
        await admin(t, 'PATCH', '/settings', { renewal_grace_days: bad }),
        400,
        'rest_invalid_param',
      );
    }
    expect((await admin(t, 'GET', '/settings')).json().renewal_grace_days).toBe(0);
  });

  it('a license past its usage expiry: packages and downloads flow within the grace, stop after', async () => {
    await setSettings(t, { renewal_grace_days: 0 });
    const f = await protectedFixture(t);
    await setLicenseColumns(db(), f.licenseId, { usage_expires_at: await inAnHour() });
    const install = () => pkg(t, { slug: f.slug, purpose: 'install', ...f.creds });
    await advanceClock(t, 2 * DAY);
    expectError(await install(), 403, 'expired');

    await setSettings(t, { renewal_grace_days: 3 });
    const res = await install();
    expect(res.statusCode).toBe(200);
    expect((await download(t, res.json().download_url as string)).statusCode).toBe(200);

    // A minute before the grace ends a token is issued; two minutes later the download is refused.
    await advanceClock(t, DAY + 3600 - 60);
    const late = (await issue(t, f)).download_url;
    await advanceClock(t, 120);
    expectError(await download(t, late), 403, 'expired');
    expectError(await install(), 403, 'expired');
  });

  it('a license past its updates window: the update check offers the release within the grace only', async () => {
    await setSettings(t, { renewal_grace_days: 0 });
    const f = await protectedFixture(t);
    await setLicenseColumns(db(), f.licenseId, {
      entitlement_policy: JSON.stringify({
        updates: { mode: 'days', expires_at: await inAnHour() },
        historical_downloads: false,
      }),
    });
    const check = () =>
      call(
        t,
        'GET',
        `/software/check?${new URLSearchParams({ slug: f.slug, version: '0.9.0', ...f.creds })}`,
      );
    await advanceClock(t, 2 * DAY);
    expect((await check()).json()).toMatchObject({
      eligible: false,
      eligibility_reason: 'release_not_entitled',
    });

    await setSettings(t, { renewal_grace_days: 3 });
    const within = (await check()).json();
    expect(within).toMatchObject({ eligible: true, update_available: true, available_version: '1.0.0' });
    expect((await download(t, within.download_url as string)).statusCode).toBe(200);

    await advanceClock(t, 2 * DAY);
    expect((await check()).json()).toMatchObject({ eligible: false, download_url: null });
  });
});
