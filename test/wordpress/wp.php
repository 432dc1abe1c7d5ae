<?php
/**
 * Drives a real WordPress from the command line for test/wordpress (docs/sdk-wordpress.md):
 *
 *     php test/wordpress/wp.php WP_ROOT COMMAND [JSON_ARGUMENTS]
 *
 * Loads WP_ROOT/wp-load.php as WordPress's own cron and CLI tools do, runs COMMAND and prints one
 * JSON line: {"result": …, "output": "what WordPress printed", "downloads": [urls fetched]}.
 * The download URLs are recorded here, by the test, from WordPress's `http_api_debug` action, so a
 * test can show that a used URL is refused; the updater itself never prints them.
 */

$root = $argv[1] ?? '';
$command = $argv[2] ?? '';
$args = isset($argv[3]) ? json_decode($argv[3], true) : [];
if (!is_dir($root) || !is_array($args)) {
    fwrite(STDERR, "usage: php wp.php WP_ROOT COMMAND [JSON]\n");
    exit(2);
}

$url = parse_url(file_get_contents($root . '/.site-url'));
$_SERVER['HTTP_HOST'] = $url['host'] . (isset($url['port']) ? ':' . $url['port'] : '');
$_SERVER['SERVER_NAME'] = $url['host'];
// On a multisite, `path` names the site the command runs on (its path, e.g. /site2/).
$_SERVER['REQUEST_URI'] = isset($args['path']) ? $args['path'] : '/';
$_SERVER['REQUEST_METHOD'] = 'GET';
$_SERVER['SERVER_PROTOCOL'] = 'HTTP/1.1';
if ($command === 'install') {
    define('WP_INSTALLING', true);
}
if ($command === 'auto-update') {
    // As wp-cron.php runs it: the background updater leaves active plugins active.
    define('DOING_CRON', true);
}

// PHP's warnings and notices while the command runs, for tests that show the SDK raises none.
$warnings = [];
set_error_handler(function ($errno, $message, $file, $line) use (&$warnings) {
    if ($errno & (E_WARNING | E_NOTICE | E_USER_WARNING | E_USER_NOTICE)) {
        $warnings[] = "$message in $file:$line";
    }
    return false;
});

ob_start();
require $root . '/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/admin.php';
require_once ABSPATH . 'wp-admin/includes/class-wp-upgrader.php';
require_once ABSPATH . 'wp-admin/includes/plugin-install.php';
if ($command === 'install') {
    require_once ABSPATH . 'wp-admin/includes/upgrade.php';
}

$downloads = [];
add_action('http_api_debug', function ($response, $context, $class, $request, $url) use (&$downloads) {
    if (strpos($url, '/software/download') !== false) {
        $downloads[] = $url;
    }
}, 10, 5);

/** A skin that keeps every message the upgrader gives, as the screens would print them. */
class Test_Skin extends Automatic_Upgrader_Skin
{
    /** @var string[] the codes of the errors the upgrader reported */
    public $codes = [];

    public function error($errors)
    {
        if (is_wp_error($errors)) {
            $this->codes = array_merge($this->codes, $errors->get_error_codes());
        }
        parent::error($errors);
    }
}

function upgrade_messages($skin): array
{
    return array_map('strval', $skin->get_upgrade_messages());
}

function error_of($value, $skin = null)
{
    if (is_wp_error($value)) {
        return ['codes' => $value->get_error_codes()];
    }
    return $skin && $skin->codes ? ['codes' => $skin->codes] : null;
}

function as_array($value)
{
    return json_decode(wp_json_encode($value), true);
}

if ($command !== 'install') {
    wp_set_current_user(1);
}

switch ($command) {
    case 'install':
        $result = wp_install('Tollgate test site', 'admin', 'admin@example.com', true, '', $args['password']);
        update_option('permalink_structure', '');
        $result = ['user_id' => $result['user_id']];
        if (!empty($args['multisite'])) {
            // What Tools → Network Setup does: the network's tables and its first rows
            // (wp-config.php gets MULTISITE after this).
            require_once ABSPATH . 'wp-admin/includes/network.php';
            foreach ($wpdb->tables('ms_global') as $table => $prefixed) {
                $wpdb->$table = $prefixed;
            }
            install_network();
            $network = populate_network(1, $_SERVER['HTTP_HOST'], 'admin@example.com', 'Tollgate network', '/', false);
            $result['network'] = is_wp_error($network) ? $network->get_error_codes() : true;
        }
        break;

    case 'create-site':
        $id = wpmu_create_blog(DOMAIN_CURRENT_SITE, $args['path'], $args['title'], 1);
        if (!is_wp_error($id)) {
            // WordPress drops the ':' of a port from a new site's domain (a network is meant to be
            // on 80 or 443); the test's server has a port of its own, so it is put back.
            global $wpdb;
            $wpdb->update($wpdb->blogs, ['domain' => DOMAIN_CURRENT_SITE], ['blog_id' => $id]);
            clean_blog_cache($id);
            $url = 'http://' . DOMAIN_CURRENT_SITE . rtrim($args['path'], '/');
            update_blog_option($id, 'home', $url);
            update_blog_option($id, 'siteurl', $url);
        }
        $result = is_wp_error($id) ? $id->get_error_codes() : $id;
        break;

    case 'activate-plugin':
        $result = error_of(activate_plugin($args['plugin'], '', !empty($args['network']))) ?? true;
        break;

    case 'deactivate-plugin':
        deactivate_plugins($args['plugin'], false, !empty($args['network']));
        $result = !empty($args['network']) ? !is_plugin_active_for_network($args['plugin']) : !is_plugin_active($args['plugin']);
        break;

    case 'uninstall-plugin':
        // As the plugins screen does it: deactivated first, then deleted through its uninstall hook.
        deactivate_plugins($args['plugin']);
        uninstall_plugin($args['plugin']);
        $result = ['option' => get_option('tollgate_' . $args['slug'], null)];
        break;

    case 'delete-plugin':
        // As the plugins screen's Delete does it: deactivated, then delete_plugins() runs the
        // uninstall hook, removes the files and writes the update list again.
        deactivate_plugins($args['plugin'], false, is_multisite() && is_plugin_active_for_network($args['plugin']));
        $deleted = delete_plugins([$args['plugin']]);
        $result = [
            'deleted' => $deleted === true,
            'option' => get_option('tollgate_' . $args['slug'], null),
            'exists' => file_exists(WP_PLUGIN_DIR . '/' . $args['plugin']),
        ];
        if (is_multisite()) {
            $result['network_option'] = get_site_option('tollgate_' . $args['slug'], null);
            $result['site_options'] = [];
            foreach (get_sites(['fields' => 'ids']) as $blog) {
                $result['site_options'][$blog] = get_blog_option($blog, 'tollgate_' . $args['slug'], null);
            }
        }
        break;

    case 'tollgate-transients':
        // Every transient (site-wide or not) the SDK may have left, by name.
        global $wpdb;
        $like = '%' . $wpdb->esc_like('transient_tollgate_') . '%';
        $names = $wpdb->get_col($wpdb->prepare("SELECT option_name FROM {$wpdb->options} WHERE option_name LIKE %s", $like));
        if (is_multisite()) {
            $names = array_merge($names, $wpdb->get_col($wpdb->prepare("SELECT meta_key FROM {$wpdb->sitemeta} WHERE meta_key LIKE %s", $like)));
        }
        $result = $names;
        break;

    case 'age-transient':
        // WordPress's own update list made older, so that its screens ask for updates again.
        $current = get_site_transient('update_' . $args['type'] . 's');
        $current->last_checked -= 3600;
        set_site_transient('update_' . $args['type'] . 's', $current);
        $result = true;
        break;

    case 'set-locale':
        // The administrator's own language (Profile → Language), '' for the site's.
        update_user_meta(1, 'locale', $args['locale']);
        $result = true;
        break;

    case 'license-status':
        $result = Tollgate\Updater::get($args['slug'])->license_status();
        break;

    case 'set-receipt':
        // Replaces the kept receipt and forgets the last validation (a test of the receipt's checks).
        $state = get_option('tollgate_' . $args['slug']);
        if (isset($args['receipt'])) {
            $state['receipt'] = $args['receipt'];
        }
        $state['validation'] = null;
        update_option('tollgate_' . $args['slug'], $state);
        $result = $state['receipt'];
        break;

    case 'switch-theme':
        switch_theme($args['theme']);
        // after_switch_theme runs on the next load of the new theme, as in a browser.
        $result = get_stylesheet();
        break;

    case 'set-option':
        update_site_option($args['name'], $args['value']);
        $result = true;
        break;

    case 'get-option':
        $result = get_option($args['name']);
        break;

    case 'state':
        $result = [
            'option' => !empty($args['network']) ? get_site_option('tollgate_' . $args['slug']) : get_option('tollgate_' . $args['slug']),
            // Null while the plugin is inactive (its code, the SDK's included, is not loaded).
            'version' => class_exists('Tollgate\\Updater') && Tollgate\Updater::get($args['slug'])
                ? Tollgate\Updater::get($args['slug'])->installed_version() : null,
        ];
        break;

    case 'activate-license':
        $result = Tollgate\Updater::get($args['slug'])->activate($args['key']);
        break;

    case 'forget-check':
        // The updater's own 10-minute cache, as after those minutes have passed.
        $network = !empty($args['network']);
        $state = $network ? get_site_option('tollgate_' . $args['slug']) : get_option('tollgate_' . $args['slug']);
        $state['check'] = null;
        $state['check_error'] = null;
        $state['next_check_at'] = 0;
        $network ? update_site_option('tollgate_' . $args['slug'], $state) : update_option('tollgate_' . $args['slug'], $state);
        $result = true;
        break;

    case 'age-check':
        // The updater's answer made `seconds` older, as if that time had passed on the site.
        $state = get_option('tollgate_' . $args['slug']);
        $state['check']['at'] -= $args['seconds'];
        $state['next_check_at'] = 0;
        if (!empty($args['clear_backoff'])) {
            $state['backoff_until'] = 0;
        }
        update_option('tollgate_' . $args['slug'], $state);
        $result = ['now' => time()];
        break;

    case 'update-check':
        // What WordPress's twice-daily cron does: ask for updates and keep them in the transient.
        $type = $args['type'];
        delete_site_transient('update_' . $type . 's');
        $type === 'theme' ? wp_update_themes() : wp_update_plugins();
        $result = as_array(get_site_transient('update_' . $type . 's'));
        break;

    case 'transient':
        $result = as_array(get_site_transient('update_' . $args['type'] . 's'));
        break;

    case 'plugin-information':
        $result = as_array(plugins_api('plugin_information', ['slug' => $args['slug']]));
        break;

    case 'upgrade-plugin':
        $skin = new Test_Skin();
        $upgrader = new Plugin_Upgrader($skin);
        $was_active = is_plugin_active($args['plugin']);
        $done = $upgrader->upgrade($args['plugin']);
        if ($was_active && $done === true) {
            // What update.php's "reactivating the plugin" step does after an update on the screen.
            activate_plugin($args['plugin'], '', false, true);
        }
        $result = [
            'ok' => $done === true,
            'error' => error_of($done, $skin),
            'messages' => upgrade_messages($skin),
            'version' => get_file_data(WP_PLUGIN_DIR . '/' . $args['plugin'], ['Version' => 'Version'])['Version'],
        ];
        break;

    case 'upgrade-theme':
        $skin = new Test_Skin();
        $upgrader = new Theme_Upgrader($skin);
        $done = $upgrader->upgrade($args['theme']);
        $result = [
            'ok' => $done === true,
            'error' => error_of($done, $skin),
            'messages' => upgrade_messages($skin),
            'version' => wp_get_theme($args['theme'])->get('Version'),
        ];
        break;

    case 'auto-update':
        // The background updater, as wp-cron runs it twice a day.
        add_filter('auto_plugin_update_send_email', '__return_false');
        add_filter('auto_theme_update_send_email', '__return_false');
        wp_maybe_auto_update();
        $file = WP_PLUGIN_DIR . '/' . $args['plugin'];
        clearstatcache();
        $result = ['version' => get_file_data($file, ['Version' => 'Version'])['Version']];
        break;

    default:
        fwrite(STDERR, "unknown command $command\n");
        exit(2);
}

$output = ob_get_clean();
echo wp_json_encode(['result' => $result, 'output' => $output, 'downloads' => $downloads, 'warnings' => $warnings]), "\n";
