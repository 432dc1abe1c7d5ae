import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, post, type TestApp } from '../helpers/app.js';
import { createCustomer, createLicense, createProduct, installationId } from '../helpers/factories.js';
import { CHROMIUM, CHROMIUM_ARGS, skipPageBrowserTests } from './chromium.js';
import { type CustomerSite, startCustomerSite } from './site.js';

/**
 * The customer's side of approval activation in a real browser: Debian's chromium driven by
 * playwright-core (never a downloaded browser), with JavaScript OFF to prove the pages need none.
 * The store and the stand-in site both listen on 127.0.0.1; the browser reaches them as
 * store.example and shop.example.com (resolver rules map both to 127.0.0.1), so they are two sites
 * with their own cookies, as in real life. SAVE_SCREENSHOTS=1 writes the pictures of docs/oauth.md.
 */
const DOCS_SHOTS = fileURLToPath(new URL('../../docs/screenshots/', import.meta.url));

let t: TestApp;
let store: string;
let site: CustomerSite;
let context: BrowserContext;
let page: Page;
let key: string;
let customer: Awaited<ReturnType<typeof createCustomer>>;
const dirs: string[] = [];
const shotsDir =
  process.env.SAVE_SCREENSHOTS === '1' ? DOCS_SHOTS : mkdtempSync(join(tmpdir(), 'tollgate-shots-'));
if (shotsDir !== DOCS_SHOTS) dirs.push(shotsDir);

const siteIdentity = () => ({ domain: site.origin, installation_id: site.installationId });
const siteHost = () => new URL(site.origin).host;
const shot = async (name: string) => {
  const path = join(shotsDir, name);
  await page.screenshot({ path, fullPage: true });
  expect(existsSync(path)).toBe(true);
};

// Without chromium a developer's run skips these; CI installs it and runs them once (chromium.ts).
describe.skipIf(skipPageBrowserTests)('approval activation in a real browser', () => {
  beforeAll(async () => {
    t = await createTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as AddressInfo).port;
    store = `http://127.0.0.1:${port}`;
    t.app.services.urls.origin = `http://store.example:${port}`;

    customer = await createCustomer(t, 'dana@example.com', 'dana-password-1');
    const forms = await createProduct(
      t,
      { name: 'Forms Pro', activation_mode: 'oauth', activation_limit: 3 },
      { via: 'database' },
    );
    key = (await createLicense(t, { product_id: forms.id, user_id: customer.id })).license_key;
    const seo = await createProduct(t, { name: 'SEO Toolkit', activation_limit: 0 }, { via: 'database' });
    await createLicense(t, { product_id: seo.id, user_id: customer.id });

    site = await startCustomerSite({
      host: 'shop.example.com',
      store,
      licenseKey: key,
      installationId: installationId(),
    });
    mkdirSync(shotsDir, { recursive: true });
    const profile = mkdtempSync(join(tmpdir(), 'tollgate-chromium-'));
    dirs.push(profile);
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      javaScriptEnabled: false,
      viewport: { width: 960, height: 720 },
      args: [
        ...CHROMIUM_ARGS,
        '--host-resolver-rules=MAP store.example 127.0.0.1, MAP shop.example.com 127.0.0.1',
      ],
    });
    page = context.pages()[0] ?? (await context.newPage());
  }, 60_000);

  afterAll(async () => {
    await context?.close();
    await site?.close();
    await t?.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('site asks, customer signs in and approves, the site exchanges the token; validate answers valid', async () => {
    await page.goto(`${site.origin}/activate`);
    // The site sent the browser to the approval page, which asked for a sign-in first.
    expect(new URL(page.url()).pathname).toBe('/account/sign-in');
    expect(new URL(page.url()).host).toBe(new URL(t.app.services.urls.origin).host);
    await page.fill('#email', customer.email);
    await shot('sign-in.png');
    await page.fill('#password', customer.password);
    await page.click('button[type=submit]');

    expect(new URL(page.url()).pathname).toBe('/account/approve');
    expect(await page.textContent('h1')).toBe('Approve site activation');
    expect(await page.textContent('.lead')).toContain(siteHost());
    expect(await page.textContent('.lead')).toContain('Forms Pro');
    await shot('approve.png');
    await page.click('button:text-is("Approve")');

    expect(`${new URL(page.url()).origin}${new URL(page.url()).pathname}`).toBe(`${site.origin}/callback`);
    expect(await page.textContent('#result')).toMatch(/^activated \d+$/);
    const callback = site.callbacks.at(-1)!;
    expect(callback.query.get('license_key')).toBe(key);
    expect(callback.query.get('plugin')).toBe('forms-pro');
    expect(callback.referer).toBeUndefined(); // no-referrer: the state never leaks to the site's logs

    const v = await post(t, '/licenses/validate', { license_key: key, ...siteIdentity() });
    expect(v.statusCode).toBe(200);
    expect(v.json()).toMatchObject({ valid: true, effective_status: 'valid', domain_active: true });
  }, 60_000);

  it('deactivating from My licenses frees the site; validate then answers domain_not_activated', async () => {
    await page.goto(`${store}/account/licenses`.replace('127.0.0.1', 'store.example'));
    expect(await page.textContent('h1')).toBe('My licenses');
    expect(await page.textContent('main')).toContain(siteHost());
    await shot('my-licenses.png');
    await page.click(`button[aria-label="Deactivate ${siteHost()}"]`);

    expect(new URL(page.url()).searchParams.get('notice')).toBe('deactivated');
    expect(await page.textContent('.notice')).toContain('deactivated');
    const v = await post(t, '/licenses/validate', { license_key: key, ...siteIdentity() });
    expect(v.statusCode).toBe(403);
    expect(v.json()).toMatchObject({ valid: false, error: 'domain_not_activated', domain_active: false });
  }, 60_000);

  it('Deny sends the customer back to the site with error=access_denied and activates nothing', async () => {
    await page.goto(`${site.origin}/activate`);
    expect(new URL(page.url()).pathname).toBe('/account/approve'); // still signed in
    await page.click('button:text-is("Deny")');
    expect(await page.textContent('#result')).toBe('denied');
    expect(site.callbacks.at(-1)!.query.get('error')).toBe('access_denied');
    const v = await post(t, '/licenses/validate', { license_key: key, ...siteIdentity() });
    expect(v.json().error).toBe('domain_not_activated');
  }, 60_000);
});
