import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tx } from '../../src/db/transaction.js';
import { SettingsService } from '../../src/modules/settings/settings.service.js';
import { createTestApp, expectError, type TestApp } from '../helpers/app.js';
import { createCustomer } from '../helpers/factories.js';
import { sleep } from '../helpers/wait.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const get = () => t.app.inject({ method: 'GET', url: '/v1/settings', headers: t.adminAuth });
const patch = (payload: unknown) =>
  t.app.inject({ method: 'PATCH', url: '/v1/settings', headers: t.adminAuth, payload: payload as object });

describe('settings', () => {
  it('answers every key with the documented defaults', async () => {
    const res = await get();
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      store_mode: 'test',
      licensing_enabled: true,
      software_enabled: true,
      activation_mode: 'simple',
      default_activation_limit: 1,
      customer_deactivation_enabled: true,
      token_expiry: 5,
      rate_limit: 10,
      webhook_url: '',
      webhook_secret: '',
      coupons_enabled: true,
      auto_registration: true,
      captcha_provider: 'none',
      captcha_site_key: '',
      captcha_secret: '',
      captcha_verify_url: '',
      base_currency: 'USD',
      currencies: [],
      currency_rate_max_age: 86400,
      renewal_window_days: 30,
      checkout_rate_limit: 5,
      prices_include_tax: false,
      tax_regime: 'manual',
      tax_seller_country: '',
      store_name: 'Tollgate store',
      invoice_seller_name: '',
      invoice_seller_address: '',
      invoice_seller_tax_number: '',
      invoice_number_prefix: 'INV-',
      invoice_number_yearly_reset: true,
      credit_note_number_prefix: 'CN-',
      credit_note_number_yearly_reset: true,
      store_accent_color: '#1d4ed8',
      store_terms_url: '',
      store_logo: '',
      smtp_url: '',
      mail_from: '',
      mail_order_receipt: true,
      mail_order_on_hold: true,
      mail_payment_received: true,
      mail_renewal_due: true,
      mail_renewal_paid: true,
      mail_renewal_failed: true,
      mail_subscription_status: true,
      mail_license_expiring: true,
      mail_license_expired: true,
      mail_renewal_reminder: true,
      mail_account_created: true,
      license_expiring_days: 7,
      receipt_grace_days: 7,
      renewal_grace_days: 0,
      renewal_discount_percent: 0,
      renewal_reminder_days: [30, 7, 0, -7],
      staging_patterns: [
        'localhost',
        '127.0.0.1',
        '*.local',
        '*.test',
        '*.localhost',
        'staging.*',
        'dev.*',
        '*.wpengine.com',
        '*.wpenginepowered.com',
        '*.kinsta.cloud',
        '*.flywheelstaging.com',
        '*.pantheonsite.io',
        '*.cloudwaysapps.com',
        '*.myftpupload.com',
      ],
      staging_activation_limit: 3,
      reinstall_takeover: false,
      stale_activation_days: null,
      refund_license_action: 'revoke',
      stripe_publishable_key: '',
      stripe_secret_key: '',
      stripe_webhook_secret: '',
      stripe_statement_descriptor: '',
      renewal_url: null,
      lmfwc_consumer_key: '',
      lmfwc_consumer_secret_sha256: '',
    });
  });

  it('PATCH changes a subset, persists it, and answers the whole object', async () => {
    const res = await patch({
      activation_mode: 'oauth',
      default_activation_limit: 3,
      webhook_url: 'https://hooks.example.com/in',
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      activation_mode: 'oauth',
      default_activation_limit: 3,
      rate_limit: 10,
    });
    const row = await t.app.services.database.db
      .selectFrom('settings')
      .selectAll()
      .where('key', '=', 'activation_mode')
      .executeTakeFirstOrThrow();
    expect(JSON.parse(row.value)).toBe('oauth');
    expect((await get()).json().webhook_url).toBe('https://hooks.example.com/in');
    await patch({ activation_mode: 'simple', default_activation_limit: 1, webhook_url: '' });
  });

  it('clamps token_expiry to 1..60 and rate_limit to 1..100 as docs/administration.md says', async () => {
    expect((await patch({ token_expiry: 0, rate_limit: 1000 })).json()).toMatchObject({
      token_expiry: 1,
      rate_limit: 100,
    });
    expect((await patch({ token_expiry: 999, rate_limit: -4 })).json()).toMatchObject({
      token_expiry: 60,
      rate_limit: 1,
    });
    await patch({ token_expiry: 5, rate_limit: 10 });
  });

  it('stores currencies with their rate as a decimal string', async () => {
    const res = await patch({
      currencies: [
        { code: 'EUR', symbol: '€', decimals: 2, rate: '0.9200', rate_updated_at: '2026-11-01T00:00:00Z' },
      ],
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().currencies[0]).toMatchObject({ code: 'EUR', rate: '0.9200' });
    await patch({ currencies: [] });
  });

  it.each([
    [{ no_such_setting: true }, 'invalid_parameters'],
    [{ licensing_enabled: 'yes' }, 'rest_invalid_param'],
    [{ activation_mode: 'magic' }, 'rest_invalid_param'],
    [{ token_expiry: '5' }, 'rest_invalid_param'],
    [{ default_activation_limit: -1 }, 'rest_invalid_param'],
    [{ webhook_url: 'javascript:alert(1)' }, 'rest_invalid_param'],
    [{ webhook_url: `https://example.com/${'a'.repeat(10_000)}` }, 'rest_invalid_param'],
    [{ webhook_secret: 'abc\r\nX-Injected: 1' }, 'rest_invalid_param'],
    [{ base_currency: "US'; DROP TABLE settings; --" }, 'rest_invalid_param'],
    [{ currencies: [{ code: 'EUR' }] }, 'rest_missing_param'],
    [{ currencies: 'EUR' }, 'rest_invalid_param'],
  ])('refuses %j with %s and changes nothing', async (payload, code) => {
    const before = (await get()).json();
    expectError(await patch(payload), 400, code);
    expect((await get()).json()).toEqual(before);
  });

  it('is for administrators only', async () => {
    const c = await createCustomer(t, 'settings-customer@example.com');
    expectError(
      await t.app.inject({ method: 'GET', url: '/v1/settings', headers: c.headers }),
      403,
      'rest_forbidden',
    );
    expectError(await t.app.inject({ method: 'GET', url: '/v1/settings' }), 401, 'rest_not_logged_in');
    expectError(
      await t.app.inject({ method: 'PATCH', url: '/v1/settings', payload: { rate_limit: 5 } }),
      401,
      'rest_not_logged_in',
    );
  });
});

describe('the settings cache', () => {
  it('is not refilled by a read that a write overtook', async () => {
    const settings = t.app.services.settings;
    await patch({ rate_limit: 10 });
    // Past the cache's lifetime, so the next read goes to the table.
    await sleep(SettingsService.CACHE_MS + 50);
    // A read of the settings table whose answer reaches the service only after the write below
    // has committed, as when a PostgreSQL read and write overlap on two connections of the pool.
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const db = t.app.services.database.db;
    const slow = {
      selectFrom: (table: 'settings') => ({
        select: (columns: ['key', 'value']) => ({
          execute: async () => {
            const rows = await db.selectFrom(table).select(columns).execute();
            await gate;
            return rows;
          },
        }),
      }),
    } as unknown as Tx;
    const overtaken = settings.get(slow);
    expect((await settings.update({ rate_limit: 42 })).rate_limit).toBe(42);
    release();
    expect((await overtaken).rate_limit).toBe(10);
    expect((await settings.get()).rate_limit).toBe(42);
    const res = await get();
    expect(res.json()).toMatchObject({ rate_limit: 42 });
    await patch({ rate_limit: 10 });
  });

  it('current() answers what get() would while the cache holds, and null once it must be read', async () => {
    const settings = t.app.services.settings;
    const read = await settings.get();
    expect(settings.current()).toBe(read);
    // A write replaces the cache at once: the hot paths never answer the old value.
    await settings.update({ rate_limit: 43 });
    expect(settings.current()?.rate_limit).toBe(43);
    expect(settings.current()).toBe(await settings.get());
    await sleep(SettingsService.CACHE_MS + 50);
    expect(settings.current()).toBeNull();
    await patch({ rate_limit: 10 });
  });
});
