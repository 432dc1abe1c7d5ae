<?php

namespace Tollgate;

/**
 * License key, updates and signed downloads from a Tollgate store for one plugin or theme
 * (docs/sdk-wordpress.md). One call in the plugin's main file or the theme's functions.php:
 *
 *     Tollgate\Updater::register('https://store.example', 'acme-widget', __FILE__);
 *
 * This class is the public face and the wiring: what it does lives in Product (what was
 * registered), Settings (the option), Cache (the transients), License (activation, validation,
 * receipts), UpdateCheck (the update check and the details modal), Download and Signatures (the
 * download and WordPress's checks of it) and LicenseScreen (the screens).
 */
final class Updater
{
    const VERSION = '0.2.0';

    /** How long an update answer is used before the store is asked again. */
    const CHECK_TTL = UpdateCheck::CHECK_TTL;
    /** How long the store is left alone after it could not be reached. */
    const OUTAGE_RETRY = UpdateCheck::OUTAGE_RETRY;
    /** How long a license validation is used before the store is asked again. */
    const VALIDATE_TTL = License::VALIDATE_TTL;
    /** How long the public keys are used before they are fetched again. */
    const KEYS_TTL = Signatures::KEYS_TTL;

    /** @var array<string,Updater> */
    private static $instances = [];

    /** @var Product */
    private $product;
    /** @var Settings */
    private $settings;
    /** @var Cache */
    private $cache;
    /** @var License */
    private $license;
    /** @var Signatures */
    private $signatures;
    /** @var UpdateCheck */
    private $updates;
    /** @var Download */
    private $download;
    /** @var LicenseScreen */
    private $screen;

    /**
     * @param string $store_url the store's address, e.g. https://store.example
     * @param string $slug the product's software slug at the store
     * @param string $file __FILE__ of the plugin's main file, or of the theme's functions.php
     * @param array<string,mixed> $options `type` ('plugin'|'theme', detected when absent),
     *        `name` (shown on the license screen), `license` (false for a product that needs no
     *        key), `renewal_url` (used when the store's answer has none), `capability`
     *        (default manage_options), `grace_days` (default 7: how long the last good answer
     *        is used through an outage), `legacy_key_option` (the option where the store's old
     *        updater kept the key: taken over on the next update check)
     */
    public static function register(string $store_url, string $slug, string $file, array $options = []): self
    {
        if (isset(self::$instances[$slug])) {
            return self::$instances[$slug];
        }
        Translations::hook();
        $updater = new self($store_url, $slug, $file, $options);
        self::$instances[$slug] = $updater;
        $updater->hook();
        return $updater;
    }

    /** The updater registered for `$slug`, if any. */
    public static function get(string $slug): ?self
    {
        return self::$instances[$slug] ?? null;
    }

    /**
     * The store this copy talks to: the vendor's address, unless the site points it elsewhere, for
     * a development copy against a staging store: the constant `TOLLGATE_STORE_URL_<SLUG>` (the
     * slug upper-cased, other characters than letters and digits as `_`, e.g.
     * `TOLLGATE_STORE_URL_ACME_WIDGET`) in wp-config.php, then the `tollgate_store_url` filter
     * (`$url, $slug`). Only an http(s) address is taken.
     */
    private static function store_url(string $vendor_url, string $slug): string
    {
        $url = $vendor_url;
        $constant = 'TOLLGATE_STORE_URL_' . strtoupper((string) preg_replace('/[^A-Za-z0-9]/', '_', $slug));
        if (defined($constant) && is_string(constant($constant))) {
            $url = (string) constant($constant);
        }
        $filtered = apply_filters('tollgate_store_url', $url, $slug);
        if (is_string($filtered)) {
            $url = $filtered;
        }
        return preg_match('#^https?://[^/?\#\s]+#i', $url) ? $url : $vendor_url;
    }

    private function __construct(string $store_url, string $slug, string $file, array $options)
    {
        $this->product = new Product(self::store_url($store_url, $slug), $slug, $file, $options);
        $this->product->network = $this->product->type === 'plugin' && is_multisite()
            && isset(((array) get_site_option('active_sitewide_plugins', []))[$this->product->id]);
        $client = new Client($this->product->store_url);
        $this->settings = new Settings($this->product);
        $this->cache = new Cache($this->product);
        $this->signatures = new Signatures($this->product, $this->settings, $client);
        $this->license = new License($this->product, $this->settings, $client, $this->signatures);
        $this->updates = new UpdateCheck($this->product, $this->settings, $client, $this->license, $this->cache);
        $this->download = new Download($this->product, $this->settings, $client, $this->license, $this->signatures, $this->updates);
        $this->screen = new LicenseScreen($this->product, $this->settings, $this->license, $this->cache);
    }

    private function hook(): void
    {
        $id = $this->product->id;
        if ($this->product->type === 'theme') {
            add_filter('pre_set_site_transient_update_themes', [$this, 'filter_update_transient']);
            add_action('switch_theme', [$this, 'on_switch_theme'], 10, 3);
            add_action('after_switch_theme', [$this, 'reactivate']);
        } else {
            add_filter('pre_set_site_transient_update_plugins', [$this, 'filter_update_transient']);
            add_filter('plugins_api', [$this, 'filter_plugins_api'], 10, 3);
            add_action('deactivate_' . $id, [$this, 'deactivate_license']);
            add_action('activate_' . $id, [$this, 'on_activate']);
            add_action('after_plugin_row_' . $id, [$this, 'plugin_row'], 10, 0);
            add_filter('plugin_action_links_' . $id, [$this, 'action_links']);
        }
        add_filter('upgrader_pre_download', [$this, 'filter_pre_download'], 10, 4);
        add_filter('wp_signature_hosts', [$this, 'filter_signature_hosts']);
        add_filter('wp_signature_softfail', [$this, 'filter_signature_softfail'], 10, 2);
        add_filter('http_request_host_is_external', [$this, 'filter_host_is_external'], 10, 2);
        add_filter('http_allowed_safe_ports', [$this, 'filter_safe_ports'], 10, 2);
        if ($this->product->licensed() && $this->product->network) {
            // One license for the network, in the network admin (Network Admin → Settings).
            add_action('network_admin_menu', [$this, 'admin_menu']);
            add_action('network_admin_edit_' . $this->screen->action(), [$this, 'save_license']);
            add_action('admin_init', [$this, 'approval_callback']);
            add_action('network_admin_notices', [$this, 'admin_notices']);
            add_filter('network_admin_plugin_action_links_' . $id, [$this, 'action_links']);
        } elseif ($this->product->licensed()) {
            add_action('admin_menu', [$this, 'admin_menu']);
            add_action('admin_post_' . $this->screen->action(), [$this, 'save_license']);
            add_action('admin_init', [$this, 'approval_callback']);
            add_action('admin_notices', [$this, 'admin_notices']);
        }
    }

    // ─── License ───────────────────────────────────────────────────────────────────────────────

    /** The installation UUID, generated once and kept (docs/licensing.md section 1). */
    public function installation_id(): string
    {
        return $this->settings->installation_id();
    }

    /** The version on disk: the plugin header or style.css, never what PHP loaded earlier. */
    public function installed_version(): string
    {
        return $this->product->installed_version();
    }

    /**
     * Activates this site with `$key` (docs/licensing.md section 2). On success the key is kept;
     * a refusal keeps nothing and answers the code and message to show.
     *
     * @return array{ok:bool, code?:string, message?:string, renewal_url?:string}
     */
    public function activate(string $key): array
    {
        return $this->license->activate($key);
    }

    /** Gives this site's seat back (docs/licensing.md section 4); the key stays for a later reactivation. */
    public function deactivate_license(): void
    {
        $this->license->deactivate();
    }

    /** Activates again with the kept key when the plugin is activated or the theme switched to. */
    public function reactivate(): void
    {
        $this->license->reactivate();
    }

    /**
     * Plugin activation: activates the license again and names the uninstall hook (kept by
     * WordPress). Activated for a whole network, the license is the network's from now on.
     */
    public function on_activate($network_wide = false): void
    {
        register_uninstall_hook($this->product->file, [self::class, 'uninstall']);
        if (is_multisite() && !is_main_site()) {
            // WordPress keeps uninstall hooks per site, and deletes plugins from the network admin,
            // which reads the main site's: named there too, so a plugin activated only on other
            // sites is still uninstalled (and every site cleaned) when it is deleted.
            switch_to_blog(get_main_site_id());
            register_uninstall_hook($this->product->file, [self::class, 'uninstall']);
            restore_current_blog();
        }
        if ($network_wide && is_multisite() && $this->product->type === 'plugin') {
            $this->product->network = true;
        }
        $this->license->reactivate();
    }

    public function on_switch_theme($new_name = '', $new_theme = null, $old_theme = null): void
    {
        if (is_object($old_theme) && method_exists($old_theme, 'get_stylesheet') && $old_theme->get_stylesheet() === $this->product->id) {
            $this->license->deactivate();
        }
    }

    /**
     * Uninstall hook (a static callable, as WordPress stores it): gives the seat back and forgets
     * the key and everything kept, on every site of a multisite and for the network.
     */
    public static function uninstall(): void
    {
        $action = current_action();
        foreach (self::$instances as $updater) {
            if ($updater->product->type === 'plugin' && $action === 'uninstall_' . $updater->product->id) {
                $updater->forget_everywhere();
            }
        }
    }

    private function forget_everywhere(): void
    {
        if (is_multisite()) {
            $this->product->network = false;
            foreach (get_sites(['fields' => 'ids', 'number' => 0]) as $blog) {
                switch_to_blog((int) $blog);
                $this->forget();
                restore_current_blog();
            }
            $this->product->network = true;
        }
        $this->forget();
    }

    private function forget(): void
    {
        $this->license->deactivate();
        $this->settings->delete();
        $this->cache->forget();
    }

    /**
     * Whether this site holds a valid license: the store's answer of the last 12 hours, or through
     * an outage the offline receipt while it lasts (docs/licensing.md, 'Offline receipts').
     *
     * @return array{valid:bool, code:string, message:string, renewal_url:string, offline:bool}
     */
    public function license_status(): array
    {
        return $this->license->status();
    }

    /** Public shorthand for feature gates: a valid license, online or by receipt. */
    public function is_licensed(): bool
    {
        return $this->license->status()['valid'];
    }

    // ─── Updates ───────────────────────────────────────────────────────────────────────────────

    /**
     * The store's update answer for the version on disk: `['answer' => array]`,
     * `['error' => array]` (the store refused) or `[]` (nothing known).
     */
    public function check(bool $force = false): array
    {
        return $this->updates->check($force);
    }

    /** The tokenless address WordPress keeps as the update's `package`. */
    public function package_marker(): string
    {
        return $this->updates->package_marker();
    }

    public function filter_update_transient($transient)
    {
        if (is_object($transient) && $this->product->licensed()) {
            $this->license->adopt_legacy_key();
        }
        return $this->updates->filter_update_transient($transient);
    }

    public function filter_plugins_api($result, $action = '', $args = null)
    {
        return $this->updates->filter_plugins_api($result, $action, $args);
    }

    // ─── Download ──────────────────────────────────────────────────────────────────────────────

    public function filter_pre_download($reply, $package = '', $upgrader = null, $hook_extra = [])
    {
        return $this->download->filter_pre_download($reply, $package, $upgrader, $hook_extra);
    }

    /** The store's public keys (GET /v1/software/signing-keys), kept 12 hours. */
    public function signing_keys(bool $refresh): array
    {
        return $this->signatures->keys($refresh);
    }

    public function filter_signature_hosts($hosts)
    {
        return $this->signatures->filter_hosts($hosts);
    }

    public function filter_signature_softfail($softfail, $url = '')
    {
        return $this->signatures->filter_softfail($softfail, $url);
    }

    public function filter_host_is_external($external, $host = '')
    {
        return $this->download->filter_host_is_external($external, $host);
    }

    public function filter_safe_ports($ports, $host = '')
    {
        return $this->download->filter_safe_ports($ports, $host);
    }

    // ─── Screens ───────────────────────────────────────────────────────────────────────────────

    public function admin_menu(): void
    {
        $this->screen->admin_menu();
    }

    public function action_links($links)
    {
        return $this->screen->action_links($links);
    }

    public function render_page(): void
    {
        $this->screen->render();
    }

    public function save_license(): void
    {
        $this->screen->save();
    }

    /** admin_init: the administrator back from the store's approval page (docs/oauth.md). */
    public function approval_callback(): void
    {
        $this->screen->approval_callback();
    }

    /** What the site's administrator should know about this license now, or null when all is well. */
    public function notice(): ?array
    {
        return $this->screen->notice();
    }

    public function plugin_row(): void
    {
        $this->screen->plugin_row();
    }

    public function admin_notices(): void
    {
        $this->screen->admin_notices();
    }
}
