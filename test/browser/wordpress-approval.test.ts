import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';
import { type ServerProcess, signIn, startServer } from '../helpers/server.js';
import {
  pluginFiles,
  type Site,
  StoreAdmin,
  startWordPress,
  wordpressPrerequisites,
  writeFiles,
} from '../wordpress/helpers.js';
import { launch, skipPageBrowserTests } from './chromium.js';

/**
 * Approval activation from the WordPress SDK (docs/sdk-wordpress.md, docs/oauth.md) end to end in
 * Debian's chromium: a real WordPress with the vendor's plugin, a store process in approval mode.
 * The site's administrator saves the key on the license screen, is sent to the store's approval
 * page, signs in there as the license's owner, approves (or denies), and comes back to the license
 * screen, where the SDK finishes the activation with the approval's token.
 */

const missing = wordpressPrerequisites();
const skip =
  skipPageBrowserTests || process.env.SKIP_WORDPRESS_TESTS === '1' || (missing !== null && !process.env.CI);

const PLUGIN = 'acme-widget/acme-widget.php';

interface State {
  option: Record<string, unknown> & { license_key?: string; activation_id?: number };
}

describe.skipIf(skip)('approval activation from the WordPress license screen, in a real browser', () => {
  let database: TestDatabase;
  let dataDir: string;
  let store: ServerProcess;
  let site: Site;
  let admin: StoreAdmin;
  let context: BrowserContext;
  let page: Page;
  let license: { id: number; license_key: string };
  const email = 'wp-approval-owner@example.com';
  const password = 'wp approval owner password';

  beforeAll(async () => {
    database = await freshDatabase();
    dataDir =
      database.config.kind === 'postgres'
        ? mkdtempSync(join(tmpdir(), 'tollgate-wp-store-'))
        : dirname(database.config.file);
    [store, site] = await Promise.all([
      startServer({
        ADMIN_EMAIL: email,
        ADMIN_PASSWORD: password,
        DATA_DIR: dataDir,
        ...(database.config.kind === 'postgres' ? { DATABASE_URL: database.config.url } : {}),
      }),
      startWordPress(),
    ]);
    admin = new StoreAdmin(store.url, await signIn(store.url, email, password));
    await admin.ok('PATCH', '/settings', { rate_limit: 100, activation_mode: 'oauth' });
    const product = await admin.product('acme-widget');
    // The store's administrator owns this license, and approves with the same sign-in.
    license = await admin.license(product);
    writeFiles(join(site.root, 'wp-content/plugins'), pluginFiles(store.url, '1.0.0', ''));
    expect((await site.wp('activate-plugin', { plugin: PLUGIN })).result).toBe(true);

    const profile = mkdtempSync(join(tmpdir(), 'tollgate-chromium-'));
    context = await launch(profile, { viewport: { width: 1100, height: 800 } });
    page = context.pages()[0] ?? (await context.newPage());
    // Signed in straight to the plugins screen, not the dashboard: the dashboard loads many more
    // files from PHP's single-threaded test server, which on a busy machine took over 30 s.
    await page.goto(
      `${site.url}/wp-login.php?redirect_to=${encodeURIComponent(`${site.url}/wp-admin/plugins.php`)}`,
    );
    await page.fill('#user_login', 'admin');
    await page.fill('#user_pass', site.adminPassword);
    await Promise.all([
      page.waitForURL(/\/wp-admin\/plugins\.php/, { waitUntil: 'domcontentloaded', timeout: 120_000 }),
      page.click('#wp-submit'),
    ]);
  }, 180_000);

  afterAll(async () => {
    await context?.close();
    await site?.stop();
    await store?.stop();
    await database?.drop();
    if (database?.config.kind === 'postgres') rmSync(dataDir, { recursive: true, force: true });
  });

  const licenseScreen = () => `${site.url}/wp-admin/options-general.php?page=tollgate-acme-widget`;
  const state = async () => (await site.wp<State>('state', { slug: 'acme-widget' })).result.option;
  const activations = async () =>
    (await admin.ok<{ id: number; status: string }[]>('GET', `/licenses/${license.id}/activations`)).filter(
      (a) => a.status === 'active',
    );
  const saveKey = async () => {
    await page.goto(licenseScreen());
    await page.fill('#tollgate-key', license.license_key);
    await page.click('#tollgate_save');
  };

  it('Deny at the store brings the administrator back with nothing activated', async () => {
    await saveKey();
    // The store's sign-in, then its approval page.
    expect(new URL(page.url()).origin).toBe(store.url);
    expect(new URL(page.url()).pathname).toBe('/account/sign-in');
    await page.fill('#email', email);
    await page.fill('#password', password);
    await page.click('button[type=submit]');
    expect(new URL(page.url()).pathname).toBe('/account/approve');
    await page.click('button:text-is("Deny")');

    await page.waitForURL((url) => url.origin === site.url);
    expect(page.url()).toBe(licenseScreen());
    expect(await page.getAttribute('.notice-error', 'data-tollgate-code')).toBe('access_denied');
    expect(await activations()).toEqual([]);
    expect((await state()).license_key ?? '').toBe('');
  });

  it('Approve at the store: back on the license screen the site is active, the token gone from the address', async () => {
    await saveKey();
    // Still signed in at the store: straight to the approval page.
    expect(new URL(page.url()).pathname).toBe('/account/approve');
    expect(await page.textContent('.lead')).toContain(new URL(site.url).host);
    await page.click('button:text-is("Approve")');

    await page.waitForURL((url) => url.origin === site.url);
    // The callback was answered and the screen shown again without its query.
    expect(page.url()).toBe(licenseScreen());
    expect(await page.getAttribute('.notice-success', 'data-tollgate-code')).toBe('activated');
    expect(await page.content()).not.toContain(license.license_key);

    const active = await activations();
    expect(active).toHaveLength(1);
    const option = await state();
    expect(option).toMatchObject({ license_key: license.license_key, activation_id: active[0]!.id });
    const status = (await site.wp<{ valid: boolean }>('license-status', { slug: 'acme-widget' })).result;
    expect(status.valid).toBe(true);
  });

  it('a callback that does not carry the state this administrator was sent with activates nothing', async () => {
    await page.goto(
      `${licenseScreen()}&activation_token=${'a'.repeat(64)}&license_key=${license.license_key}&state=forged`,
    );
    expect(page.url()).toBe(licenseScreen());
    expect(await page.getAttribute('.notice-error', 'data-tollgate-code')).toBe('approval_expired');
    expect(await activations()).toHaveLength(1);
  });
});
