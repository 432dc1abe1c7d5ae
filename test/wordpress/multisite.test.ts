import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';
import { type ServerProcess, signIn, startServer } from '../helpers/server.js';
import {
  pluginFiles,
  type Site,
  StoreAdmin,
  startWordPress,
  type WpBrowser,
  wordpressPrerequisites,
  writeFiles,
  zipOf,
} from './helpers.js';

/**
 * The WordPress SDK on a real multisite (docs/sdk-wordpress.md, 'Multisite'): Debian's WordPress
 * as a subdirectory network of three sites. A network-activated plugin has one license for the
 * network, entered in the network admin, and its updates on the network's update screens; a
 * plugin activated per site has a license per site; deleting the plugin cleans every site.
 */

const missing = wordpressPrerequisites();
const skip = process.env.SKIP_WORDPRESS_TESTS === '1' || (missing !== null && !process.env.CI);

const WIDGET = 'acme-widget/acme-widget.php';
const EXTRA = 'acme-extra/acme-extra.php';
const RENEWAL = 'https://store.example/renew';

interface Activation {
  id: number;
  status: string;
  installation_id: string;
}
interface State {
  option: (Record<string, unknown> & { license_key?: string; activation_id?: number }) | false;
}
interface Transient {
  response?: Record<string, { new_version: string; package: string }>;
}

describe.skipIf(skip)('the WordPress SDK on a multisite network of three sites', () => {
  let database: TestDatabase;
  let dataDir: string;
  let store: ServerProcess;
  let site: Site;
  let admin: StoreAdmin;
  let browser: WpBrowser;
  let widget: { product: number; key: string; license: number };
  let extra: { product: number; key: string; license: number };

  beforeAll(async () => {
    database = await freshDatabase();
    dataDir =
      database.config.kind === 'postgres'
        ? mkdtempSync(join(tmpdir(), 'tollgate-wp-store-'))
        : dirname(database.config.file);
    const email = 'wp-network-admin@example.com';
    const password = 'wp network admin password';
    [store, site] = await Promise.all([
      startServer({
        ADMIN_EMAIL: email,
        ADMIN_PASSWORD: password,
        DATA_DIR: dataDir,
        ...(database.config.kind === 'postgres' ? { DATABASE_URL: database.config.url } : {}),
      }),
      startWordPress({ multisite: true }),
    ]);
    admin = new StoreAdmin(store.url, await signIn(store.url, email, password));
    await admin.ok('PATCH', '/settings', { rate_limit: 100 });
    for (const [slug, set] of [
      ['acme-widget', (v: typeof widget) => (widget = v)],
      ['acme-extra', (v: typeof extra) => (extra = v)],
    ] as const) {
      const product = await admin.product(slug);
      const license = await admin.license(product);
      await admin.ok('PATCH', `/licenses/${license.id}`, { activation_limit: 5 });
      set({ product, key: license.license_key, license: license.id });
    }
    const plugins = join(site.root, 'wp-content/plugins');
    writeFiles(plugins, pluginFiles(store.url, '1.0.0', RENEWAL));
    writeFiles(plugins, pluginFiles(store.url, '1.0.0', RENEWAL, 'acme-extra', 'Acme Extra'));
    await admin.release(widget.product, '1.1.0', zipOf(pluginFiles(store.url, '1.1.0', RENEWAL)));
    browser = await site.browser();
  }, 180_000);

  afterAll(async () => {
    await site?.stop();
    await store?.stop();
    await database?.drop();
    if (database?.config.kind === 'postgres') rmSync(dataDir, { recursive: true, force: true });
  });

  const activations = async (license: number) =>
    (await admin.ok<Activation[]>('GET', `/licenses/${license}/activations`)).filter(
      (a) => a.status === 'active',
    );

  /** Saves `key` on a license screen over HTTP: the form as the screen printed it. */
  const save = async (screen: string, key: string) => {
    const page = await browser.request(screen);
    expect(page.status, screen).toBe(200);
    const action = /<form method="post" action="([^"]+)"/.exec(page.body)?.[1]?.replaceAll('&#038;', '&');
    const fields: Record<string, string> = { tollgate_license_key: key, tollgate_save: 'Save' };
    for (const m of page.body.matchAll(/<input type="hidden"[^>]*name="([^"]+)"[^>]*value="([^"]*)"/g)) {
      fields[m[1]!] = m[2]!;
    }
    const saved = await browser.request(action!, { form: fields });
    expect(saved.status).toBe(302);
    return browser.request(saved.location);
  };

  it('a network-activated plugin has one license for the network, entered in the network admin', async () => {
    expect((await site.wp('activate-plugin', { plugin: WIDGET, network: true })).result).toBe(true);
    // No license screen on a site's own admin: the network's administrator holds the key.
    const onSite = await browser.request('/site2/wp-admin/options-general.php?page=tollgate-acme-widget');
    expect(onSite.status).not.toBe(200);

    const after = await save('/wp-admin/network/settings.php?page=tollgate-acme-widget', widget.key);
    expect(after.body).toContain('notice-success');
    expect(after.body).not.toContain(widget.key);

    const active = await activations(widget.license);
    expect(active).toHaveLength(1);
    const network = (await site.wp<State>('state', { slug: 'acme-widget', network: true })).result.option;
    expect(network).toMatchObject({ license_key: widget.key, activation_id: active[0]!.id });
    expect(active[0]!.installation_id).toBe((network as { installation_id: string }).installation_id);
    // Nothing in the sites' own options.
    for (const path of ['/', '/site2/', '/site3/']) {
      expect((await site.wp<State>('state', { slug: 'acme-widget', path })).result.option).toBe(false);
    }
  });

  it("its update is on the network's update screens, from every site's check, and installs", async () => {
    for (const path of ['/site3/', '/']) {
      const transient = (await site.wp<Transient>('update-check', { type: 'plugin', path })).result;
      expect(transient.response?.[WIDGET]).toMatchObject({
        new_version: '1.1.0',
        package: `${store.url}/v1/software/package?slug=acme-widget`,
      });
      await site.wp('forget-check', { slug: 'acme-widget', network: true });
    }
    const screen = await browser.request('/wp-admin/network/update-core.php');
    expect(screen.status).toBe(200);
    expect(screen.body).toMatch(/Acme Widget[\s\S]*1\.1\.0/);
    const upgrade = await site.wp<{ ok: boolean; version: string }>('upgrade-plugin', { plugin: WIDGET });
    expect(upgrade.result).toMatchObject({ ok: true, version: '1.1.0' });
  });

  it('a plugin activated per site has a license per site, each its own activation', async () => {
    for (const path of ['/site2/', '/site3/']) {
      expect((await site.wp('activate-plugin', { plugin: EXTRA, path })).result).toBe(true);
      const after = await save(`${path}wp-admin/options-general.php?page=tollgate-acme-extra`, extra.key);
      expect(after.body).toContain('notice-success');
    }
    const active = await activations(extra.license);
    expect(active).toHaveLength(2);
    const ids = await Promise.all(
      ['/site2/', '/site3/'].map(
        async (path) =>
          (
            (await site.wp<State>('state', { slug: 'acme-extra', path })).result.option as {
              activation_id: number;
            }
          ).activation_id,
      ),
    );
    expect(ids.sort()).toEqual(active.map((a) => a.id).sort());
    expect((await site.wp<State>('state', { slug: 'acme-extra', network: true })).result.option).toBe(false);
    expect((await site.wp<State>('state', { slug: 'acme-extra', path: '/' })).result.option).toBe(false);
  });

  it("deleting a plugin gives every site's seat back and deletes every site's options", async () => {
    const extraGone = await site.wp<{
      deleted: boolean;
      site_options: Record<string, unknown>;
      network_option: unknown;
    }>('delete-plugin', { plugin: EXTRA, slug: 'acme-extra' });
    expect(extraGone.result.deleted).toBe(true);
    expect(Object.values(extraGone.result.site_options)).toEqual([null, null, null]);
    expect(extraGone.result.network_option).toBeNull();
    expect(await activations(extra.license)).toEqual([]);

    const widgetGone = await site.wp<{ deleted: boolean; network_option: unknown }>('delete-plugin', {
      plugin: WIDGET,
      slug: 'acme-widget',
    });
    expect(widgetGone.result).toMatchObject({ deleted: true, network_option: null });
    expect(await activations(widget.license)).toEqual([]);
    expect(widgetGone.warnings.filter((w) => /acme-|tollgate/i.test(w))).toEqual([]);
  });
});
