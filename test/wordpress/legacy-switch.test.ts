import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';
import { type ServerProcess, signIn, startServer } from '../helpers/server.js';
import {
  pluginFiles,
  ROOT,
  type Site,
  StoreAdmin,
  startWordPress,
  wordpressPrerequisites,
  writeFiles,
  zipOf,
} from './helpers.js';

/**
 * A store that moved to Tollgate from Easy Digital Downloads, seen from a site in the field
 * (docs/migrating.md, 'Sites already in the field' and 'Leaving the compatibility API'), in a real
 * WordPress: the site runs a plugin whose old updater speaks EDD Software Licensing's `edd_action`
 * API; it is offered the next release through that API and installs it with WordPress's own
 * upgrader; that release carries the Tollgate SDK, which takes the old updater's key over on its
 * next check, and the store gives the site's URL-only activation its full identity in place: the
 * same seat, and the customer did nothing.
 *
 * The old updater is EDD Software Licensing's own `EDD_SL_Plugin_Updater` 1.9.2 (Easy Digital
 * Downloads, GPL-2.0-or-later), unmodified, as the plugin welbinator/roadmapwp-pro ships it at
 * commit 96b88942b59d8f20ba9908722d36eac9c9f3dc74, path EDD_SL_Plugin_Updater.php. Being third-party code it is not in this repository: it is placed by
 * hand as test/wordpress/fixtures/edd-sl-plugin-updater/EDD_SL_Plugin_Updater.php (see the README
 * there) and checked by its SHA-256. Where it is absent the test runs a small updater of its own
 * that sends the same `get_version` call instead.
 */

const missing = wordpressPrerequisites();
const skip = process.env.SKIP_WORDPRESS_TESTS === '1' || (missing !== null && !process.env.CI);

const SLUG = 'legacy-widget';
const PLUGIN = `${SLUG}/${SLUG}.php`;
/** Where the old updater kept the customer's key, as EDD's sample plugin does. */
const KEY_OPTION = 'legacy_widget_license_key';
const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/**
 * EDD Software Licensing's own updater class, unmodified: not part of this repository; placed by
 * hand in test/wordpress/fixtures/edd-sl-plugin-updater/ (its README.md names the source repository,
 * path, commit and licence, GPL-2.0-or-later) or named by EDD_SL_PLUGIN_UPDATER. Null when absent;
 * a file that is not that exact version is refused, so only the unmodified class runs.
 */
const EDD_UPDATER_FILE =
  process.env.EDD_SL_PLUGIN_UPDATER ??
  join(ROOT, 'test/wordpress/fixtures/edd-sl-plugin-updater/EDD_SL_Plugin_Updater.php');
const EDD_UPDATER_SHA256 = '5556190ded3f47a738f7ce67f78249e0769a341955ad6ba2fa9ad6501f4b5fc2';
function eddUpdaterClass(): Buffer | null {
  if (!existsSync(EDD_UPDATER_FILE)) return null;
  const bytes = readFileSync(EDD_UPDATER_FILE);
  const sha = createHash('sha256').update(bytes).digest('hex');
  if (sha !== EDD_UPDATER_SHA256)
    throw new Error(`${EDD_UPDATER_FILE} is not the pinned EDD_SL_Plugin_Updater 1.9.2`);
  return bytes;
}

/**
 * Version 1.0 as sold by the old store, with EDD's updater class: the plugin file constructs it
 * as vendors do (EDD's sample plugin), with the old store's address, the version, the key from
 * the option the license screen kept it in, the item id, the author and `beta` off.
 */
function eddPlugin(store: string, itemId: number, updater: Buffer): [string, Buffer][] {
  const main = `<?php
/**
 * Plugin Name: Legacy Widget
 * Version: 1.0.0
 */
if (!defined('ABSPATH')) exit;
if (!class_exists('EDD_SL_Plugin_Updater')) {
    require_once __DIR__ . '/EDD_SL_Plugin_Updater.php';
}
add_action('init', function () {
    new EDD_SL_Plugin_Updater('${store}', __FILE__, array(
        'version' => '1.0.0',
        'license' => trim((string) get_option('${KEY_OPTION}')),
        'item_id' => ${itemId},
        'author' => 'Legacy Widget Ltd',
        'beta' => false,
    ));
});
`;
  return [
    [PLUGIN, Buffer.from(main)],
    [`${SLUG}/EDD_SL_Plugin_Updater.php`, updater],
  ];
}

/**
 * Version 1.0 with a small updater written for this test, for where EDD's class is not at hand:
 * it asks the store's `edd_action` API on WordPress's update check with the parameters EDD's class
 * sends (`get_version`, the key, the item id, the site's URL) and puts the answer into WordPress's
 * update data as that class does.
 */
function ownPlugin(store: string, itemId: number): [string, Buffer][] {
  const main = `<?php
/**
 * Plugin Name: Legacy Widget
 * Version: 1.0.0
 */
if (!defined('ABSPATH')) exit;
add_filter('pre_set_site_transient_update_plugins', function ($transient) {
    if (!is_object($transient)) return $transient;
    $response = wp_remote_post('${store}', ['timeout' => 15, 'body' => [
        'edd_action' => 'get_version',
        'license' => trim((string) get_option('${KEY_OPTION}')),
        'item_id' => ${itemId},
        'version' => '1.0.0',
        'slug' => '${SLUG}',
        'url' => home_url(),
        'beta' => false,
    ]]);
    if (is_wp_error($response) || wp_remote_retrieve_response_code($response) !== 200) return $transient;
    $info = json_decode(wp_remote_retrieve_body($response));
    if (!is_object($info) || empty($info->new_version)) return $transient;
    $info->plugin = '${PLUGIN}';
    $info->id = '${PLUGIN}';
    $info->slug = '${SLUG}';
    if (version_compare($info->new_version, '1.0.0', '>')) {
        $transient->response['${PLUGIN}'] = $info;
    }
    return $transient;
});
`;
  return [[PLUGIN, Buffer.from(main)]];
}

interface Activation {
  id: number;
  status: string;
  installation_id: string;
  domain_normalized: string;
}

const eddClass = eddUpdaterClass();
const oldPlugin = eddClass
  ? (store: string, itemId: number) => eddPlugin(store, itemId, eddClass)
  : ownPlugin;
const updaterName = eddClass ? 'EDD_SL_Plugin_Updater 1.9.2' : 'an updater sending its calls';

describe.skipIf(skip)(`leaving the edd_action API with ${updaterName}, on a real WordPress`, () => {
  let database: TestDatabase;
  let dataDir: string;
  let store: ServerProcess;
  let site: Site;
  let admin: StoreAdmin;
  let product: number;
  let license: { id: number; license_key: string };

  beforeAll(async () => {
    database = await freshDatabase();
    dataDir =
      database.config.kind === 'postgres'
        ? mkdtempSync(join(tmpdir(), 'tollgate-wp-legacy-'))
        : dirname(database.config.file);
    const email = 'legacy-admin@example.com';
    const password = 'legacy admin password';
    [store, site] = await Promise.all([
      startServer({
        ADMIN_EMAIL: email,
        ADMIN_PASSWORD: password,
        DATA_DIR: dataDir,
        TEST_CLOCK: '1',
        ...(database.config.kind === 'postgres' ? { DATABASE_URL: database.config.url } : {}),
      }),
      startWordPress(),
    ]);
    admin = new StoreAdmin(store.url, await signIn(store.url, email, password));
    await admin.ok('PATCH', '/settings', { rate_limit: 100 });
    product = await admin.product(SLUG);
    await admin.ok('POST', `/software/products/${product}/config`, { legacy_api: true });
    license = await admin.license(product);

    // In the field the old store is a public https address; here the store listens on loopback,
    // which WordPress's safe download refuses unless told otherwise.
    const port = new URL(store.url).port;
    writeFileSync(
      join(site.root, 'wp-content/mu-plugins/loopback-store.php'),
      `<?php
add_filter('http_request_host_is_external', '__return_true');
add_filter('http_allowed_safe_ports', function ($ports) { $ports[] = ${port}; return $ports; });
`,
    );
    writeFiles(join(site.root, 'wp-content/plugins'), oldPlugin(store.url, product));
    expect((await site.wp('activate-plugin', { plugin: PLUGIN })).result).toBe(true);
    await site.wp('set-option', { name: KEY_OPTION, value: license.license_key });

    // The next release carries the Tollgate SDK and names the option the old updater kept the key in.
    const next = pluginFiles(store.url, '2.0.0', '', SLUG, 'Legacy Widget').map(
      ([path, bytes]): [string, Buffer] =>
        path === PLUGIN
          ? [
              path,
              Buffer.from(
                bytes.toString().replace("['renewal_url' => '']", `['legacy_key_option' => '${KEY_OPTION}']`),
              ),
            ]
          : [path, bytes],
    );
    expect(next.find(([path]) => path === PLUGIN)![1].toString()).toContain('legacy_key_option');
    await admin.release(product, '2.0.0', zipOf(next));
  }, 180_000);

  afterAll(async () => {
    await site?.stop();
    await store?.stop();
    await database?.drop();
    if (database?.config.kind === 'postgres') rmSync(dataDir, { recursive: true, force: true });
  });

  const activations = () => admin.ok<Activation[]>('GET', `/licenses/${license.id}/activations`);

  it('the old updater is answered, installs the release, and the SDK takes the seat over in place', async () => {
    const host = new URL(site.url).host;
    // The site as the old store left it: activated by its URL through edd_action.
    const activated = await fetch(`${store.url}/`, {
      method: 'POST',
      body: new URLSearchParams({
        edd_action: 'activate_license',
        license: license.license_key,
        item_id: String(product),
        url: site.url,
      }),
    });
    expect(activated.status).toBe(200);
    expect(await activated.json()).toMatchObject({ success: true, license: 'valid' });
    const before = await activations();
    expect(before).toHaveLength(1);
    expect(before[0]).toMatchObject({ status: 'active', installation_id: NIL_UUID, domain_normalized: host });

    // WordPress's update check runs the old updater: 2.0.0 is offered with a package, and the old
    // updater read the store's answer without a notice of PHP.
    const checked = await site.wp<{
      response?: Record<string, { new_version: string; package: string; plugin: string }>;
    }>('update-check', { type: 'plugin' });
    const offer = checked.result.response?.[PLUGIN];
    expect(offer?.new_version).toBe('2.0.0');
    expect(offer?.package).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    expect(offer?.plugin).toBe(PLUGIN);
    expect(checked.warnings.filter((w) => w.includes(SLUG))).toEqual([]);
    // The package is the store's signed package link (docs/migrating.md, 'The package link').
    const pkg = offer!.package;
    expect(pkg).toMatch(/\/edd-sl\/package\?a=\d+&r=\d+&e=\d+&s=[\w-]{43}$/);
    expect(pkg).not.toContain(license.license_key);
    type Offers = { response?: Record<string, { package: string }> };
    if (eddClass) {
      // EDD's class keeps the answer for three hours in its option edd_sl_<md5 of slug and key>;
      // WordPress's checks within those hours are given this same answer, package included.
      const kept = `${SLUG}${license.license_key}`;
      const option = `edd_sl_${createHash('md5')
        .update(`s:${Buffer.byteLength(kept)}:"${kept}";`)
        .digest('hex')}`;
      const cache = (await site.wp<{ timeout: number; value: string }>('get-option', { name: option }))
        .result;
      expect(JSON.parse(cache.value)).toMatchObject({ new_version: '2.0.0', package: pkg });
      // 'View version 2.0.0 details' is the class's too: the store's sections, as WordPress shows them.
      const details = await site.wp<{ sections: Record<string, string> }>('plugin-information', {
        slug: SLUG,
      });
      expect(details.result.sections.changelog).toContain('2.0.0');
      expect(details.result.sections.description).toBeTypeOf('string');
      expect(details.warnings).toEqual([]);
    }

    // "Update now" clicked two hours later, far past the store's token_expiry (5 minutes). When the
    // package was a download token, it had expired by then ("Download failed", 403 token_expired),
    // and the update installed only once the class's three-hour cache ran out and it asked again;
    // the signed link lasts 24 hours and mints its token when WordPress downloads it, so the
    // answer the class kept (and WordPress's offer) installs as it is: its cache is left alone.
    await admin.ok('POST', '/test-clock', { advance_seconds: 2 * 3600 });
    if (eddClass) {
      const again = await site.wp<Offers>('update-check', { type: 'plugin' });
      expect(again.result.response?.[PLUGIN]?.package).toBe(pkg);
    }

    // WordPress's own upgrader installs it from that package, following the link's redirect.
    const upgraded = await site.wp<{ ok: boolean; version: string; error: unknown }>('upgrade-plugin', {
      plugin: PLUGIN,
    });
    expect(upgraded.result).toMatchObject({ ok: true, version: '2.0.0' });

    // Every download is still a single-use token: the link redirects to a fresh one each time.
    const opened = await fetch(pkg, { redirect: 'manual' });
    expect(opened.status).toBe(302);
    const token = opened.headers.get('location')!;
    expect(token).toMatch(/\/software\/download\?token=[0-9a-f]{64}$/);
    expect((await fetch(token)).status).toBe(200);
    expect((await fetch(token)).status).toBe(403);

    // The next check is the SDK's: it takes the old key over and activates with its full identity.
    await site.wp('update-check', { type: 'plugin' });
    const state = (
      await site.wp<{ option: { license_key: string; installation_id: string; activation_id: number } }>(
        'state',
        {
          slug: SLUG,
        },
      )
    ).result;
    expect(state.option.license_key).toBe(license.license_key);
    expect(state.option.installation_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4/);
    const after = await activations();
    // The same seat: one activation, the same id, now with the site's installation id.
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({
      id: before[0]!.id,
      status: 'active',
      installation_id: state.option.installation_id,
      domain_normalized: host,
    });
    expect(state.option.activation_id).toBe(before[0]!.id);
    // The old updater's option is gone, so a key the owner removes later is not taken again.
    expect((await site.wp<unknown>('get-option', { name: KEY_OPTION })).result).toBe(false);
    // The seat is the SDK's now: the old updater's package link mints nothing more.
    const ended = await fetch(pkg, { redirect: 'manual' });
    expect(ended.status).toBe(403);
    expect(((await ended.json()) as { code: string }).code).toBe('domain_not_activated');
  });
});
