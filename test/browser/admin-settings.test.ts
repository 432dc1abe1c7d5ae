import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signed, stripeEvent } from '../stripe/helpers.js';
import { skipPageBrowserTests } from './chromium.js';
import { alertCode, api, checkBothWidths, page, server, setUpConsole, signInInBrowser } from './console.js';

type StripeSettings = {
  stripe_publishable_key: string;
  stripe_secret_key: string;
  stripe_webhook_secret: string;
  stripe_statement_descriptor: string;
};
const KEYS = {
  publishable: 'pk_test_typedInTheConsole',
  secret: 'sk_test_typedInTheConsole42',
  webhook: 'whsec_typedInTheConsole',
};

/** A signed event of a type Tollgate does not act on: the answer says whether the secret matched. */
async function deliverSignedWith(secret: string) {
  const { payload, headers } = signed(stripeEvent('customer.created', { id: 'cus_console' }), { secret });
  const res = await fetch(`${server.url}/v1/stripe/webhook`, { method: 'POST', headers, body: payload });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/**
 * The Stripe keys and the renewal page on the console's Settings screen (docs/admin.md;
 * docs/payments.md, 'Stripe'; docs/distribution.md, 'Messages a vendor can show'). Stripe: a
 * refused key is shown at its field and saves nothing; the secrets come back as ******** and are
 * kept while left so; the webhook secret typed in the browser is the one the webhook route checks
 * signatures with; the gateway's card points to the settings. The old store's LMFWC REST key
 * (docs/migrating.md, 'License Manager for WooCommerce') saved there opens its routes. The form's result does not depend on
 * the database, so this runs once (SQLite), with the page tests.
 */
describe.skipIf(skipPageBrowserTests)('the Stripe, renewal and old store settings in a real browser', () => {
  setUpConsole();

  it('saves the keys, masks the secrets, keeps them while masked and removes one when emptied', async () => {
    await signInInBrowser('/admin/settings');
    await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
    const publishable = page.getByLabel('Publishable key');
    const secret = page.getByLabel('Secret key', { exact: true });
    const webhook = page.getByLabel('Webhook signing secret');
    const descriptor = page.getByLabel('Card statement suffix');
    const save = () => page.getByRole('button', { name: 'Save settings' }).click();
    expect(await publishable.inputValue()).toBe('');
    expect(await secret.getAttribute('type')).toBe('password');
    expect(await webhook.getAttribute('type')).toBe('password');

    // A secret key typed where the publishable key goes: refused at its field, nothing saved.
    await publishable.fill(KEYS.secret);
    await secret.fill(KEYS.secret);
    await save();
    await page.locator('[role=alert][data-code]').first().waitFor();
    expect(await alertCode()).toBe('rest_invalid_param');
    expect(await publishable.getAttribute('aria-invalid')).toBe('true');
    const untouched = (await api<StripeSettings>('GET', '/settings')).body;
    expect(untouched.stripe_publishable_key).toBe('');
    expect(untouched.stripe_secret_key).toBe('');
    const before = await deliverSignedWith(KEYS.webhook);
    expect([before.status, before.body.code]).toEqual([503, 'stripe_not_configured']);

    await publishable.fill(KEYS.publishable);
    await webhook.fill(KEYS.webhook);
    await descriptor.fill('NORTHWIND');
    await save();
    await page.getByText('The settings are saved.').waitFor();
    const saved = (await api<StripeSettings>('GET', '/settings')).body;
    expect(saved).toMatchObject({
      stripe_publishable_key: KEYS.publishable,
      stripe_secret_key: '********',
      stripe_webhook_secret: '********',
      stripe_statement_descriptor: 'NORTHWIND',
    });
    // The page shows the mask, never the secret, and the secret is nowhere in the page.
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
    await page.getByLabel('Webhook signing secret').waitFor();
    expect(await webhook.inputValue()).toBe('********');
    expect(await secret.inputValue()).toBe('********');
    expect(await page.content()).not.toContain(KEYS.webhook.slice(6));
    await checkBothWidths('settings-stripe');

    // What was typed is what the webhook route checks signatures with.
    expect(await deliverSignedWith(KEYS.webhook)).toEqual({
      status: 200,
      body: { received: true, result: 'ignored' },
    });
    const forged = await deliverSignedWith('whsec_someoneElse');
    expect([forged.status, forged.body.code]).toEqual([400, 'stripe_signature_invalid']);

    // Another setting changed with the secrets left masked keeps them.
    await descriptor.fill('NORTHWIND PRO');
    await save();
    await page.getByText('The settings are saved.').waitFor();
    expect((await api<StripeSettings>('GET', '/settings')).body.stripe_webhook_secret).toBe('********');
    expect((await deliverSignedWith(KEYS.webhook)).status).toBe(200);

    // Emptied, the signing secret is removed: the route is unconfigured again.
    await webhook.fill('');
    await save();
    await page.getByText('The settings are saved.').waitFor();
    expect((await api<StripeSettings>('GET', '/settings')).body.stripe_webhook_secret).toBe('');
    const unconfigured = await deliverSignedWith(KEYS.webhook);
    expect([unconfigured.status, unconfigured.body.code]).toEqual([503, 'stripe_not_configured']);
  });

  it("the card gateway's card points to the Stripe settings", async () => {
    await page.goto(`${server.url}/admin/payment-gateways`);
    const card = page.getByRole('region', { name: /Card/ });
    await card.getByRole('link', { name: 'Settings → Stripe' }).click();
    await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
    await page.getByRole('group', { name: 'Stripe' }).waitFor();
  });

  it('renewal_url: a refused URL is shown on its field; a URL is saved; emptied, it is null', async () => {
    await page.goto(`${server.url}/admin/settings`);
    const url = page.getByLabel('Renewal page URL');
    await url.waitFor();
    expect(await url.inputValue()).toBe('');
    const save = () => page.getByRole('button', { name: 'Save settings' }).click();
    const renewalUrl = async () =>
      (await api<{ renewal_url: string | null }>('GET', '/settings')).body.renewal_url;

    await url.fill('javascript:alert(1)');
    await save();
    await page.locator('[role=alert][data-code]').first().waitFor();
    expect(await alertCode()).toBe('rest_invalid_param');
    expect(await url.getAttribute('aria-invalid')).toBe('true');
    expect(await renewalUrl()).toBeNull();

    await url.fill('https://vendor.example.com/renew');
    await save();
    await page.getByText('The settings are saved.').waitFor();
    expect(await renewalUrl()).toBe('https://vendor.example.com/renew');

    await url.fill('');
    await save();
    await page.getByText('The settings are saved.').waitFor();
    expect(await renewalUrl()).toBeNull();
  });

  it("the old store's LMFWC REST key: a malformed hash is refused at its field; saved, the routes open", async () => {
    const key = `ck_${'0f'.repeat(20)}`;
    const secret = `cs_${'9e'.repeat(20)}`;
    const lmfwc = () =>
      fetch(`${server.url}/wp-json/lmfwc/v2/licenses/validate/NO-SUCH-KEY`, {
        headers: { authorization: `Basic ${Buffer.from(`${key}:${secret}`).toString('base64')}` },
      }).then(async (r) => ({ status: r.status, code: ((await r.json()) as { code?: string }).code }));
    expect(await lmfwc()).toEqual({ status: 401, code: 'woocommerce_rest_authentication_error' });

    await page.goto(`${server.url}/admin/settings`);
    const keyField = page.getByLabel('WooCommerce REST consumer key');
    await keyField.waitFor();
    const hashField = page.getByLabel('SHA-256 of its consumer secret');
    const save = () => page.getByRole('button', { name: 'Save settings' }).click();
    await keyField.fill(key);
    await hashField.fill(secret);
    await save();
    await page.locator('[role=alert][data-code]').first().waitFor();
    expect(await alertCode()).toBe('rest_invalid_param');
    expect(await hashField.getAttribute('aria-invalid')).toBe('true');
    expect(await lmfwc()).toEqual({ status: 401, code: 'woocommerce_rest_authentication_error' });

    await hashField.fill(createHash('sha256').update(secret).digest('hex'));
    await save();
    await page.getByText('The settings are saved.').waitFor();
    // Past the REST key: the key is one LMFWC does not know.
    expect(await lmfwc()).toEqual({ status: 404, code: 'lmfwc_rest_data_error' });
    await checkBothWidths('settings-lmfwc');
  });
});
