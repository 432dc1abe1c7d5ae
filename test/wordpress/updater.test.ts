import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';
import { type ServerProcess, signIn, startServer } from '../helpers/server.js';
import {
  freePort,
  moFile,
  pluginFiles,
  type Site,
  StoreAdmin,
  type StoreProxy,
  startProxy,
  startWordPress,
  themeFiles,
  wordpressPrerequisites,
  writeFiles,
  zipOf,
} from './helpers.js';

/**
 * The WordPress SDK (sdk/wordpress, docs/sdk-wordpress.md) in a real WordPress: Debian's
 * WordPress 6.1 on PHP and MariaDB, driven over HTTP (the license screen, the plugins screen) and
 * from PHP (WordPress's own updaters), against a real store process on the test clock.
 */

const missing = wordpressPrerequisites();
const skip = process.env.SKIP_WORDPRESS_TESTS === '1' || (missing !== null && !process.env.CI);
if (missing !== null && process.env.CI && process.env.SKIP_WORDPRESS_TESTS !== '1') {
  // Under CI (.ci/run installs them) a missing WordPress, PHP or MariaDB fails instead of skipping.
  describe('WordPress prerequisites', () => {
    it('are installed', () => {
      expect(missing).toBeNull();
    });
  });
}

const PLUGIN = 'acme-widget/acme-widget.php';
const RENEWAL = 'https://store.example/renew/acme-widget';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** A token as the store writes it: never in a screen, a message or WordPress's update data. */
const TOKEN = /token=|[0-9A-Za-z_-]{40,}/;

interface UpgradeResult {
  ok: boolean;
  error: { codes: string[] } | null;
  messages: string[];
  version: string;
}
interface UpdateEntry {
  new_version: string;
  package: string;
  [field: string]: unknown;
}
interface Transient {
  response?: Record<string, UpdateEntry>;
  no_update?: Record<string, UpdateEntry>;
}
interface State {
  option: Record<string, unknown> & { installation_id: string; activation_id: number; license_key: string };
  version: string;
}

describe.skipIf(skip)('the WordPress SDK in WordPress 6.1', () => {
  let database: TestDatabase;
  let dataDir: string;
  let store: ServerProcess;
  let proxy: StoreProxy;
  let site: Site;
  let admin: StoreAdmin;
  let plugin: { product: number; key: string; licenseId: number };
  let theme: { product: number; key: string };

  beforeAll(async () => {
    database = await freshDatabase();
    dataDir =
      database.config.kind === 'postgres'
        ? mkdtempSync(join(tmpdir(), 'tollgate-wp-store-'))
        : dirname(database.config.file);
    // The site reaches the store through a proxy that a test can make damage downloads; the
    // store's PUBLIC_URL names the proxy, so its download URLs do too.
    const proxyPort = await freePort();
    let storeUrl = '';
    proxy = await startProxy(proxyPort, () => storeUrl);
    const email = 'wp-store-admin@example.com';
    const password = 'wp store admin password';
    [store, site] = await Promise.all([
      startServer({
        ADMIN_EMAIL: email,
        ADMIN_PASSWORD: password,
        DATA_DIR: dataDir,
        TEST_CLOCK: '1',
        PUBLIC_URL: proxy.url,
        ...(database.config.kind === 'postgres' ? { DATABASE_URL: database.config.url } : {}),
      }),
      startWordPress(),
    ]);
    storeUrl = store.url;
    admin = new StoreAdmin(store.url, await signIn(store.url, email, password));
    await admin.ok('PATCH', '/settings', { rate_limit: 100 });

    const pluginProduct = await admin.product('acme-widget');
    const pluginLicense = await admin.license(pluginProduct);
    plugin = { product: pluginProduct, key: pluginLicense.license_key, licenseId: pluginLicense.id };
    const themeProduct = await admin.product('acme-theme');
    theme = { product: themeProduct, key: (await admin.license(themeProduct)).license_key };

    writeFiles(join(site.root, 'wp-content/plugins'), pluginFiles(proxy.url, '1.0.0', RENEWAL));
    expect((await site.wp('activate-plugin', { plugin: PLUGIN })).result).toBe(true);
    await admin.release(pluginProduct, '1.1.0', zipOf(pluginFiles(proxy.url, '1.1.0', RENEWAL)));
  }, 180_000);

  afterAll(async () => {
    await site?.stop();
    await store?.stop();
    await proxy?.close();
    await database?.drop();
    if (database?.config.kind === 'postgres') rmSync(dataDir, { recursive: true, force: true });
  });

  const state = async (slug = 'acme-widget') => (await site.wp<State>('state', { slug })).result;
  const updateCheck = async (type: 'plugin' | 'theme') =>
    (await site.wp<Transient>('update-check', { type })).result;
  const marker = (slug: string) => `${proxy.url}/v1/software/package?slug=${slug}`;

  it('the license key activates this site when it is saved on the license screen', async () => {
    const browser = await site.browser();
    const page = await browser.request('/wp-admin/options-general.php?page=tollgate-acme-widget');
    expect(page.status).toBe(200);
    const nonce = /name="_wpnonce" value="([^"]+)"/.exec(page.body)?.[1];
    expect(nonce).toBeTruthy();
    const form = (fields: Record<string, string>) =>
      browser.request('/wp-admin/admin-post.php', {
        form: { action: 'tollgate_license_acme-widget', _wpnonce: nonce!, tollgate_save: 'Save', ...fields },
      });

    // A forged request (no valid nonce) is refused and activates nothing.
    const forged = await browser.request('/wp-admin/admin-post.php', {
      form: { action: 'tollgate_license_acme-widget', _wpnonce: 'forged', tollgate_license_key: plugin.key },
    });
    expect(forged.status).toBe(403);
    // So is an anonymous one.
    const anonymous = await fetch(`${site.url}/wp-admin/admin-post.php`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({ action: 'tollgate_license_acme-widget', tollgate_license_key: plugin.key }),
    });
    expect(anonymous.status).toBe(400);
    expect((await admin.ok<unknown[]>('GET', `/licenses/${plugin.licenseId}/activations`)).length).toBe(0);

    // A wrong key, hostile text included: refused with the store's code, shown escaped, nothing kept.
    const wrong = await form({ tollgate_license_key: '<script>alert(1)</script>WRONG-KEY' });
    expect(wrong.status).toBe(302);
    const refused = await browser.request(wrong.location);
    expect(refused.body).toContain('notice-error');
    expect(refused.body).not.toContain('<script>alert(1)');
    expect((await state()).option.license_key ?? '').toBe('');

    const saved = await form({ tollgate_license_key: ` ${plugin.key} ` });
    expect(saved.status).toBe(302);
    const after = await browser.request(saved.location);
    expect(after.body).toContain('notice-success');
    // The key is never printed back in full: its last four characters only.
    expect(after.body).not.toContain(plugin.key);
    expect(after.body).toContain(plugin.key.slice(-4));
    // With a key saved, the way to another tier: the store's My licenses page (docs/sdk-wordpress.md, 'Upgrades').
    expect(after.body).toMatch(
      /<a href="[^"]+\/account\/licenses"[^>]*>Upgrade or downgrade your license<\/a>/,
    );
    expect(page.body).not.toContain('Upgrade or downgrade your license');

    const activations = await admin.ok<
      { id: number; status: string; installation_id: string; domain_normalized: string }[]
    >('GET', `/licenses/${plugin.licenseId}/activations`);
    expect(activations).toHaveLength(1);
    const s = await state();
    expect(s.option.installation_id).toMatch(UUID);
    expect(activations[0]).toMatchObject({
      status: 'active',
      id: s.option.activation_id,
      installation_id: s.option.installation_id,
      domain_normalized: new URL(site.url).host,
    });
    expect(s.option.license_key).toBe(plugin.key);

    // Saved again: the same activation (the store's idempotent answer), the same installation id.
    const again = await form({ tollgate_license_key: plugin.key });
    expect(again.status).toBe(302);
    expect(await admin.ok<unknown[]>('GET', `/licenses/${plugin.licenseId}/activations`)).toHaveLength(1);
    expect((await state()).option.installation_id).toBe(s.option.installation_id);
  });

  it("the SDK's screens speak the administrator's language from a translation the site installed", async () => {
    const dir = join(site.root, 'wp-content/languages/plugins');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'tollgate-updater-fr_FR.mo'),
      moFile({ 'License key': 'Clé de licence', '%s license': 'Licence de %s' }),
    );
    const browser = await site.browser();
    const page = '/wp-admin/options-general.php?page=tollgate-acme-widget';
    expect((await browser.request(page)).body).toContain('License key');
    await site.wp('set-locale', { locale: 'fr_FR' });
    try {
      const body = (await browser.request(page)).body;
      expect(body).toContain('Clé de licence');
      expect(body).toContain('Licence de Acme Widget');
      expect(body).not.toContain('>License key<');
    } finally {
      await site.wp('set-locale', { locale: '' });
    }
  });

  it('deactivating the plugin gives the seat back; activating it again activates the kept key', async () => {
    const active = async () =>
      (
        await admin.ok<{ id: number; status: string }[]>('GET', `/licenses/${plugin.licenseId}/activations`)
      ).filter((a) => a.status === 'active');
    expect((await site.wp('deactivate-plugin', { plugin: PLUGIN })).result).toBe(true);
    expect(await active()).toEqual([]);
    expect((await state()).option.license_key).toBe(plugin.key);
    expect((await site.wp('activate-plugin', { plugin: PLUGIN })).result).toBe(true);
    const now = await active();
    expect(now).toHaveLength(1);
    expect((await state()).option.activation_id).toBe(now[0]!.id);
  });

  it('WordPress offers 1.1.0 and its Plugin_Upgrader replaces the plugin; the URL it used is refused a second time', async () => {
    const transient = await updateCheck('plugin');
    const entry = transient.response?.[PLUGIN];
    expect(entry).toMatchObject({
      new_version: '1.1.0',
      package: marker('acme-widget'),
      slug: 'acme-widget',
      plugin: PLUGIN,
    });
    expect(JSON.stringify(transient)).not.toMatch(/token/);
    expect(JSON.stringify((await state()).option)).not.toMatch(/token=|download_url/);
    // The check said what the site runs (docs/sdk-wordpress.md): the store counts one site, on
    // this WordPress and this PHP, in its installed-base report.
    const field = await admin.ok<{
      days: { sites: number; versions: { version: string; sites: number }[] }[];
      platforms: { platform: string; version: string; sites: number }[];
      php: { version: string; sites: number }[];
    }>('GET', `/software/products/${plugin.product}/field?days=1`);
    expect(field.days[0]).toMatchObject({ sites: 1, versions: [{ version: '1.0.0', sites: 1 }] });
    expect(field.platforms).toMatchObject([{ platform: 'wordpress', version: '6.1', sites: 1 }]);
    const php = execFileSync('php', ['-r', 'echo PHP_MAJOR_VERSION . "." . PHP_MINOR_VERSION;'], {
      encoding: 'utf8',
    });
    expect(field.php).toMatchObject([{ version: php, sites: 1 }]);

    const details = (
      await site.wp<{ version: string; sections: { changelog: string } }>('plugin-information', {
        slug: 'acme-widget',
      })
    ).result;
    expect(details.version).toBe('1.1.0');
    expect(details.sections.changelog).toContain('<h4>1.1.0');

    const upgrade = await site.wp<UpgradeResult>('upgrade-plugin', { plugin: PLUGIN });
    expect(upgrade.result.error).toBeNull();
    expect(upgrade.result).toMatchObject({ ok: true, version: '1.1.0' });
    // What the upgrader printed names the package marker, never the single-use URL.
    expect(upgrade.result.messages.join('\n')).not.toMatch(TOKEN);
    expect(upgrade.output).not.toMatch(TOKEN);
    expect((await state()).version).toBe('1.1.0');

    expect(upgrade.downloads).toHaveLength(1);
    const second = await fetch(upgrade.downloads[0]!);
    expect(second.status).toBe(403);
    expect(((await second.json()) as { code: string }).code).toBe('token_consumed');
  });

  it('the background updater installs 1.2.0 after the token a cached answer would have carried has expired', async () => {
    await admin.release(plugin.product, '1.2.0', zipOf(pluginFiles(proxy.url, '1.2.0', RENEWAL)));
    await site.wp('set-option', { name: 'auto_update_plugins', value: [PLUGIN] });
    // The updater's answer for 1.1.0 (asked when the update completed) is kept 10 minutes.
    await site.wp('forget-check', { slug: 'acme-widget' });
    const transient = await updateCheck('plugin');
    expect(transient.response?.[PLUGIN]).toMatchObject({
      new_version: '1.2.0',
      package: marker('acme-widget'),
    });

    // The URL the same check hands out now, kept as WordPress keeps update answers (for hours),
    // is dead once the store's clock is past its lifetime (5 minutes).
    const s = await state();
    const check = await fetch(`${proxy.url}/v1/software/check`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        slug: 'acme-widget',
        version: '1.1.0',
        license_key: plugin.key,
        site_url: `${site.url}/`,
        installation_id: s.option.installation_id,
      }),
    });
    const cachedUrl = ((await check.json()) as { download_url: string }).download_url;
    expect(cachedUrl).toContain('token=');
    await admin.ok('POST', '/test-clock', { advance_seconds: 600 });
    const stale = await fetch(cachedUrl);
    expect(stale.status).toBe(403);
    expect(((await stale.json()) as { code: string }).code).toBe('token_expired');

    const auto = await site.wp<{ version: string }>('auto-update', { plugin: PLUGIN });
    expect(auto.result.version).toBe('1.2.0');
    expect(auto.downloads).toHaveLength(1);
    expect(auto.downloads[0]).not.toBe(cachedUrl);
  });

  describe('integrity checked by WordPress itself (Content-MD5 and X-Content-Signature on downloads)', () => {
    beforeAll(async () => {
      await admin.release(plugin.product, '1.3.0', zipOf(pluginFiles(proxy.url, '1.3.0', RENEWAL)));
      await site.wp('forget-check', { slug: 'acme-widget' });
      const transient = await updateCheck('plugin');
      expect(transient.response?.[PLUGIN]?.new_version).toBe('1.3.0');
    });
    afterAll(() => {
      proxy.mode = 'pass';
    });

    it('a package whose bytes changed on the way is refused by its Content-MD5', async () => {
      proxy.mode = 'flip';
      const upgrade = (await site.wp<UpgradeResult>('upgrade-plugin', { plugin: PLUGIN })).result;
      expect(upgrade.ok).toBe(false);
      expect(upgrade.error?.codes, JSON.stringify(upgrade)).toEqual(['md5_mismatch']);
      expect(upgrade.version).toBe('1.2.0');
    });

    it('a package whose signature does not verify is refused, with no soft failure', async () => {
      proxy.mode = 'flip-md5';
      const upgrade = (await site.wp<UpgradeResult>('upgrade-plugin', { plugin: PLUGIN })).result;
      expect(upgrade.ok).toBe(false);
      expect(upgrade.error?.codes, JSON.stringify(upgrade)).toEqual(['signature_verification_failed']);
      expect(upgrade.version).toBe('1.2.0');
    });
  });

  it('through a store outage the last good answer stands; after a 429 the store is left alone until retry_after', async () => {
    // (1.3.0 was offered above and is still the newest release.)
    await site.wp('age-check', { slug: 'acme-widget', seconds: 660 });
    proxy.mode = 'down';
    const before = proxy.requests;
    let transient = await updateCheck('plugin');
    expect(proxy.requests).toBeGreaterThan(before);
    expect(transient.response?.[PLUGIN]).toMatchObject({
      new_version: '1.3.0',
      package: marker('acme-widget'),
    });

    const { now } = (await site.wp<{ now: number }>('age-check', { slug: 'acme-widget', seconds: 660 }))
      .result;
    proxy.mode = 'limited';
    transient = await updateCheck('plugin');
    expect(transient.response?.[PLUGIN]).toMatchObject({
      new_version: '1.3.0',
      package: marker('acme-widget'),
    });
    const backoff = Number((await state()).option.backoff_until) - now;
    expect(backoff).toBeGreaterThanOrEqual(115);
    expect(backoff).toBeLessThanOrEqual(125);

    // Back in service, but retry_after has not passed: the check and the download stay away.
    proxy.mode = 'pass';
    await site.wp('age-check', { slug: 'acme-widget', seconds: 660 });
    const quiet = proxy.requests;
    transient = await updateCheck('plugin');
    expect(transient.response?.[PLUGIN]?.new_version).toBe('1.3.0');
    const upgrade = (await site.wp<UpgradeResult>('upgrade-plugin', { plugin: PLUGIN })).result;
    expect(upgrade.error?.codes).toEqual(['rate_limited']);
    expect(proxy.requests).toBe(quiet);
    expect(upgrade.version).toBe('1.2.0');
    await site.wp('age-check', { slug: 'acme-widget', seconds: 0, clear_backoff: true });
  });

  it('the license holds through an outage by its offline receipt; a receipt that does not verify does not', async () => {
    interface Status {
      valid: boolean;
      code: string;
      offline: boolean;
    }
    const status = async () => (await site.wp<Status>('license-status', { slug: 'acme-widget' })).result;
    expect(await status()).toMatchObject({ valid: true, code: 'valid', offline: false });
    const receipt = (await state()).option.receipt as {
      payload: string;
      signature: string;
      signing_key_id: string;
    };
    expect(receipt.payload).toBeTruthy();

    proxy.mode = 'down';
    try {
      await site.wp('set-receipt', { slug: 'acme-widget' });
      expect(await status()).toMatchObject({ valid: true, offline: true });
      const bad = Buffer.from(receipt.signature, 'base64');
      bad[0] = (bad[0] ?? 0) ^ 0x01;
      await site.wp('set-receipt', {
        slug: 'acme-widget',
        receipt: { ...receipt, signature: bad.toString('base64') },
      });
      expect(await status()).toMatchObject({ valid: false, code: 'store_unreachable', offline: true });
      const other = JSON.parse(Buffer.from(receipt.payload, 'base64url').toString()) as Record<
        string,
        unknown
      >;
      other.installation_id = '00000000-0000-4000-8000-000000000000';
      await site.wp('set-receipt', {
        slug: 'acme-widget',
        receipt: { ...receipt, payload: Buffer.from(JSON.stringify(other)).toString('base64url') },
      });
      expect((await status()).valid).toBe(false);
    } finally {
      proxy.mode = 'pass';
      await site.wp('set-receipt', { slug: 'acme-widget', receipt });
    }
  });

  it('an expired license shows the renewal message on the plugins screen and gets no package', async () => {
    await admin.ok('PATCH', `/licenses/${plugin.licenseId}`, { usage_expires_at: '2020-01-01T00:00:00Z' });
    await site.wp('forget-check', { slug: 'acme-widget' });
    const transient = await updateCheck('plugin');
    const entry = transient.response?.[PLUGIN];
    expect(entry === undefined || entry.package === '').toBe(true);
    // The store names its own product page (docs/distribution.md, section 11), which the SDK prefers
    // to the vendor's `renewal_url` option.
    const error = (await state()).option.check_error as { code: string; renewal_url: string };
    expect(error).toMatchObject({
      code: 'expired',
      renewal_url: expect.stringMatching(/\/products\/[^/]+$/),
    });
    expect(error.renewal_url).not.toBe(RENEWAL);

    const browser = await site.browser();
    const screen = await browser.request('/wp-admin/plugins.php');
    expect(screen.status).toBe(200);
    const row = /<tr class="plugin-update-tr active tollgate-license-row">[\s\S]*?<\/tr>/.exec(
      screen.body,
    )?.[0];
    expect(row).toBeDefined();
    expect(row).toContain(`href="${error.renewal_url}"`);
    // The store's message already names the version that exists: said once, not twice.
    const available = (error as { available_version?: string }).available_version;
    expect(available).toBe('1.3.0');
    expect(row!.split(`${available} is available`)).toHaveLength(2);

    // The license screen offers the renewal, at the store's link.
    const licenseScreen = await browser.request('/wp-admin/options-general.php?page=tollgate-acme-widget');
    const renew =
      /<div class="notice notice-warning inline tollgate-renewal" data-tollgate-code="([^"]+)">[\s\S]*?<\/div>/.exec(
        licenseScreen.body,
      );
    expect(renew?.[1]).toBe('expired');
    expect(renew?.[0]).toContain(`href="${error.renewal_url}"`);
    expect(renew?.[0]).toContain('>Renew</a>');

    const upgrade = (await site.wp<UpgradeResult>('upgrade-plugin', { plugin: PLUGIN })).result;
    expect(upgrade.ok).toBe(false);
    expect(upgrade.version).toBe('1.2.0');
  });

  it("a term license ending within 30 days: the license screen's Renew opens the store's one-click renewal link", async () => {
    const now = Date.parse((await admin.ok<{ now: string }>('GET', '/test-clock')).now);
    const screen = async (end: number) => {
      await admin.ok('PATCH', `/licenses/${plugin.licenseId}`, {
        usage_expires_at: new Date(end).toISOString(),
        entitlement_policy: { usage: { mode: 'days', days: 365 }, updates: { mode: 'days', days: 36500 } },
      });
      await site.wp('forget-check', { slug: 'acme-widget' });
      await updateCheck('plugin');
      const browser = await site.browser();
      return (await browser.request('/wp-admin/options-general.php?page=tollgate-acme-widget')).body;
    };
    try {
      const far = await screen(now + 100 * 86_400_000);
      expect(far).not.toContain('tollgate-renewal');
      const soon = await screen(now + 20 * 86_400_000);
      const answer = ((await state()).option.check as { answer: { renewal_url: string } }).answer;
      expect(answer.renewal_url).toMatch(/\/renew\?token=\d+\.\d+\.[A-Za-z0-9_-]{43}$/);
      const renew =
        /<div class="notice notice-warning inline tollgate-renewal" data-tollgate-code="([^"]+)">[\s\S]*?<\/div>/.exec(
          soon,
        );
      expect(renew?.[1]).toBe('renewal_due');
      expect(renew?.[0]).toContain(`href="${answer.renewal_url}"`);
      // The link works signed out: it opens the renewal order's pay page.
      const opened = await fetch(answer.renewal_url.replace(proxy.url, store.url), { redirect: 'manual' });
      expect(opened.status).toBe(303);
      expect(opened.headers.get('location')).toMatch(/^\/checkout\/pay\/\d+\?key=/);
    } finally {
      // Back as the expired test left it: a license without a policy, ended in 2020.
      await admin.ok('PATCH', `/licenses/${plugin.licenseId}`, {
        usage_expires_at: '2020-01-01T00:00:00Z',
        entitlement_policy: null,
      });
      await site.wp('forget-check', { slug: 'acme-widget' });
    }
  });

  it('a theme: activated, offered 1.1.0 and replaced by Theme_Upgrader', async () => {
    writeFiles(join(site.root, 'wp-content/themes'), themeFiles(proxy.url, '1.0.0'));
    expect((await site.wp('switch-theme', { theme: 'acme-theme' })).result).toBe('acme-theme');
    const activated = (
      await site.wp<{ ok: boolean }>('activate-license', { slug: 'acme-theme', key: theme.key })
    ).result;
    expect(activated.ok).toBe(true);
    await admin.release(theme.product, '1.1.0', zipOf(themeFiles(proxy.url, '1.1.0')));

    const transient = await updateCheck('theme');
    expect(transient.response?.['acme-theme']).toMatchObject({
      new_version: '1.1.0',
      package: marker('acme-theme'),
    });
    const upgrade = await site.wp<UpgradeResult>('upgrade-theme', { theme: 'acme-theme' });
    expect(upgrade.result.error).toBeNull();
    expect(upgrade.result).toMatchObject({ ok: true, version: '1.1.0' });
    expect(upgrade.result.messages.join('\n')).not.toMatch(TOKEN);
    expect(upgrade.downloads).toHaveLength(1);
    const second = await fetch(upgrade.downloads[0]!);
    expect(((await second.json()) as { code: string }).code).toBe('token_consumed');
  });

  describe('after the license is renewed', () => {
    beforeAll(async () => {
      await admin.ok('PATCH', `/licenses/${plugin.licenseId}`, { usage_expires_at: null });
      await site.wp('forget-check', { slug: 'acme-widget' });
      expect((await updateCheck('plugin')).response?.[PLUGIN]?.new_version).toBe('1.3.0');
    });
    afterAll(async () => {
      proxy.mode = 'pass';
      await site.wp('age-check', { slug: 'acme-widget', seconds: 0, clear_backoff: true });
    });

    it("WordPress's Check again on the updates screen asks the store past the SDK's 10-minute answer", async () => {
      await admin.release(plugin.product, '1.4.0', zipOf(pluginFiles(proxy.url, '1.4.0', RENEWAL)));
      const browser = await site.browser();
      // The updates screen asks again when WordPress's list is more than a minute old: the SDK's
      // answer of a moment ago is used.
      await site.wp('age-transient', { type: 'plugin' });
      expect((await browser.request('/wp-admin/update-core.php')).status).toBe(200);
      let transient = (await site.wp<Transient>('transient', { type: 'plugin' })).result;
      expect(transient.response?.[PLUGIN]?.new_version).toBe('1.3.0');
      // "Check again" is the administrator asking for the store's word now.
      await site.wp('age-transient', { type: 'plugin' });
      expect((await browser.request('/wp-admin/update-core.php?force-check=1')).status).toBe(200);
      transient = (await site.wp<Transient>('transient', { type: 'plugin' })).result;
      expect(transient.response?.[PLUGIN]).toMatchObject({
        new_version: '1.4.0',
        package: marker('acme-widget'),
      });
    });

    it('while the store answers 429 the plugins screen says it is busy and keeps the update it knew', async () => {
      // The last answer is older than the outage grace (7 days): a 429 is the store saying
      // "later", not "nothing new".
      await site.wp('age-check', { slug: 'acme-widget', seconds: 8 * 86400 });
      proxy.mode = 'limited';
      const transient = await updateCheck('plugin');
      expect(transient.response?.[PLUGIN]).toMatchObject({
        new_version: '1.4.0',
        package: marker('acme-widget'),
      });
      const screen = await (await site.browser()).request('/wp-admin/plugins.php');
      expect(screen.body).toContain('data-tollgate-code="rate_limited"');
      proxy.mode = 'pass';
      await site.wp('age-check', { slug: 'acme-widget', seconds: 0, clear_backoff: true });
    });

    it("a refusal of the download itself reaches the administrator with the store's code", async () => {
      // The stored file of 1.4.0 damaged in the store's vault: the package route hands out a URL,
      // and the download route refuses it (500 artifact_integrity_failed).
      const sha = createHash('sha256')
        .update(zipOf(pluginFiles(proxy.url, '1.4.0', RENEWAL)))
        .digest('hex');
      const files: string[] = [];
      const walk = (dir: string) => {
        for (const e of readdirSync(dir, { withFileTypes: true })) {
          if (e.isDirectory()) walk(join(dir, e.name));
          else files.push(join(dir, e.name));
        }
      };
      walk(join(dataDir, 'vault'));
      const stored = files.find((f) => createHash('sha256').update(readFileSync(f)).digest('hex') === sha);
      expect(stored).toBeDefined();
      const original = readFileSync(stored!);
      const { atime, mtime } = statSync(stored!);
      const damaged = Buffer.from(original);
      damaged[damaged.length >> 1] = (damaged[damaged.length >> 1] ?? 0) ^ 0x01;
      writeFileSync(stored!, damaged);
      utimesSync(stored!, atime, mtime);
      try {
        const upgrade = (await site.wp<UpgradeResult>('upgrade-plugin', { plugin: PLUGIN })).result;
        expect(upgrade.ok).toBe(false);
        expect(upgrade.error?.codes, JSON.stringify(upgrade)).toEqual(['artifact_integrity_failed']);
        expect(upgrade.version).toBe('1.2.0');
      } finally {
        writeFileSync(stored!, original);
        utimesSync(stored!, atime, mtime);
      }
    });

    it('a development copy points at another store by a constant or the tollgate_store_url filter', async () => {
      const mu = join(site.root, 'wp-content/mu-plugins/staging-store.php');
      try {
        for (const line of [
          `define('TOLLGATE_STORE_URL_ACME_WIDGET', '${store.url}');`,
          `add_filter('tollgate_store_url', function ($url, $slug) { return $slug === 'acme-widget' ? '${store.url}' : $url; }, 10, 2);`,
        ]) {
          writeFileSync(mu, `<?php\n${line}\n`);
          await site.wp('forget-check', { slug: 'acme-widget' });
          const transient = await updateCheck('plugin');
          expect(transient.response?.[PLUGIN]).toMatchObject({
            new_version: '1.4.0',
            package: `${store.url}/v1/software/package?slug=acme-widget`,
          });
        }
        // The theme, registered without either, still talks to the vendor's address.
        expect((await updateCheck('theme')).no_update?.['acme-theme']).toBeDefined();
        expect(JSON.stringify(await updateCheck('theme'))).not.toContain(store.url);
      } finally {
        rmSync(mu, { force: true });
        await site.wp('forget-check', { slug: 'acme-widget' });
      }
    });
  });

  it('deleting the plugin gives its seat back, forgets the key and its transients, with no PHP warning', async () => {
    expect((await state()).option.license_key).toBe(plugin.key);
    // The details modal kept the changelog in a site transient.
    await site.wp('plugin-information', { slug: 'acme-widget' });
    expect((await site.wp<string[]>('tollgate-transients')).result.length).toBeGreaterThan(0);
    const removed = await site.wp<{ deleted: boolean; option: unknown; exists: boolean }>('delete-plugin', {
      plugin: PLUGIN,
      slug: 'acme-widget',
    });
    expect(removed.result).toMatchObject({ deleted: true, option: null, exists: false });
    expect(removed.warnings.filter((w) => /acme-widget|tollgate/i.test(w))).toEqual([]);
    expect((await site.wp<string[]>('tollgate-transients')).result).toEqual([]);
    const active = (
      await admin.ok<{ status: string }[]>('GET', `/licenses/${plugin.licenseId}/activations`)
    ).filter((a) => a.status === 'active');
    expect(active).toEqual([]);
  });
});
