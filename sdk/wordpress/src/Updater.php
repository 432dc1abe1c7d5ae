<?php

namespace Tollgate;

/**
 * License key, updates and signed downloads from a Tollgate store for one plugin or theme
 * (docs/sdk-wordpress.md). One call in the plugin's main file or the theme's functions.php:
 *
 *     Tollgate\Updater::register('https://store.example', 'acme-widget', __FILE__);
 *
 * What is stored, in the option `tollgate_<slug>`: the license key, the activation id, the
 * installation UUID, the last good update answer (never its download URL), the store's public
 * keys, the last validation with its offline receipt, and the time before which the store asked
 * not to be called again.
 */
final class Updater
{
    const VERSION = '0.1.0';

    /** How long an update answer is used before the store is asked again. */
    const CHECK_TTL = 600;
    /** How long the store is left alone after it could not be reached. */
    const OUTAGE_RETRY = 300;
    /** How long a license validation is used before the store is asked again. */
    const VALIDATE_TTL = 43200;
    /** How long the public keys are used before they are fetched again. */
    const KEYS_TTL = 43200;

    /** @var array<string,Updater> */
    private static $instances = [];

    /** @var string */
    private $store_url;
    /** @var string */
    private $store_host;
    /** @var string the product's software slug at the store */
    private $slug;
    /** @var string */
    private $file;
    /** @var string 'plugin' or 'theme' */
    private $type;
    /** @var string plugin basename (dir/main.php) or theme stylesheet */
    private $id;
    /** @var string the directory name WordPress knows the plugin or theme by */
    private $wp_slug;
    /** @var Client */
    private $client;
    /** @var array<string,mixed> */
    private $options;

    /**
     * @param string $store_url the store's address, e.g. https://store.example
     * @param string $slug the product's software slug at the store
     * @param string $file __FILE__ of the plugin's main file, or of the theme's functions.php
     * @param array<string,mixed> $options `type` ('plugin'|'theme', detected when absent),
     *        `name` (shown on the license screen), `license` (false for a product that needs no
     *        key), `renewal_url` (used when the store's answer has none), `capability`
     *        (default manage_options), `grace_days` (default 7: how long the last good answer
     *        is used through an outage)
     */
    public static function register(string $store_url, string $slug, string $file, array $options = []): self
    {
        if (isset(self::$instances[$slug])) {
            return self::$instances[$slug];
        }
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

    private function __construct(string $store_url, string $slug, string $file, array $options)
    {
        $this->store_url = rtrim($store_url, '/');
        $this->store_host = strtolower((string) wp_parse_url($this->store_url, PHP_URL_HOST));
        $this->slug = $slug;
        $this->file = $file;
        $this->options = $options + [
            'license' => true,
            'renewal_url' => '',
            'capability' => 'manage_options',
            'grace_days' => 7,
            'name' => '',
        ];
        $this->client = new Client($this->store_url);
        $this->type = isset($options['type']) ? (string) $options['type'] : $this->detect_type($file);
        if ($this->type === 'theme') {
            $this->id = basename(dirname($file));
            $this->wp_slug = $this->id;
        } else {
            $this->id = plugin_basename($file);
            $dir = dirname($this->id);
            $this->wp_slug = $dir === '.' ? basename($this->id, '.php') : $dir;
        }
    }

    /** A file inside a theme root is a theme's (its functions.php); anything else is a plugin's. */
    private function detect_type(string $file): string
    {
        $path = wp_normalize_path((string) realpath($file) ?: $file);
        $roots = function_exists('get_theme_roots') ? (array) get_theme_roots() : [];
        $roots[] = get_theme_root();
        foreach ($roots as $root) {
            $root = wp_normalize_path((string) (realpath($root) ?: $root));
            if ($root !== '' && strpos($path, trailingslashit($root)) === 0) {
                return 'theme';
            }
        }
        return 'plugin';
    }

    private function hook(): void
    {
        if ($this->type === 'theme') {
            add_filter('pre_set_site_transient_update_themes', [$this, 'filter_update_transient']);
            add_action('switch_theme', [$this, 'on_switch_theme'], 10, 3);
            add_action('after_switch_theme', [$this, 'reactivate']);
        } else {
            add_filter('pre_set_site_transient_update_plugins', [$this, 'filter_update_transient']);
            add_filter('plugins_api', [$this, 'filter_plugins_api'], 10, 3);
            add_action('deactivate_' . $this->id, [$this, 'deactivate_license']);
            add_action('activate_' . $this->id, [$this, 'on_activate']);
            add_action('after_plugin_row_' . $this->id, [$this, 'plugin_row'], 10, 0);
            add_filter('plugin_action_links_' . $this->id, [$this, 'action_links']);
        }
        add_filter('upgrader_pre_download', [$this, 'filter_pre_download'], 10, 4);
        add_filter('wp_signature_hosts', [$this, 'filter_signature_hosts']);
        add_filter('wp_signature_softfail', [$this, 'filter_signature_softfail'], 10, 2);
        add_filter('http_request_host_is_external', [$this, 'filter_host_is_external'], 10, 2);
        add_filter('http_allowed_safe_ports', [$this, 'filter_safe_ports'], 10, 2);
        if ($this->options['license']) {
            add_action('admin_menu', [$this, 'admin_menu']);
            add_action('admin_post_' . $this->action(), [$this, 'save_license']);
            add_action('admin_notices', [$this, 'admin_notices']);
        }
    }

    // ─── State ──────────────────────────────────────────────────────────────────────────────────

    private function option_name(): string
    {
        return 'tollgate_' . $this->slug;
    }

    private function state(): array
    {
        $state = get_option($this->option_name(), []);
        return is_array($state) ? $state : [];
    }

    private function save_state(array $state): void
    {
        update_option($this->option_name(), $state, false);
    }

    private function update_state(array $changes): array
    {
        $state = array_merge($this->state(), $changes);
        $this->save_state($state);
        return $state;
    }

    /** The installation UUID, generated once and kept (docs/licensing.md section 1). */
    public function installation_id(): string
    {
        $state = $this->state();
        $id = $state['installation_id'] ?? '';
        if (!is_string($id) || !preg_match('/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/', $id)) {
            $id = strtolower(wp_generate_uuid4());
            $this->update_state(['installation_id' => $id]);
        }
        return $id;
    }

    private function license_key(): string
    {
        $key = $this->state()['license_key'] ?? '';
        return is_string($key) ? $key : '';
    }

    private function site_url(): string
    {
        return home_url('/');
    }

    /** The site's host as the store normalises it (docs/licensing.md, 'Domain normalisation'). */
    private function normalised_domain(): string
    {
        $parts = wp_parse_url($this->site_url());
        $host = rtrim(strtolower((string) ($parts['host'] ?? '')), '.');
        if (function_exists('idn_to_ascii') && preg_match('/[^\x20-\x7e]/', $host)) {
            $ascii = idn_to_ascii($host, 0, defined('INTL_IDNA_VARIANT_UTS46') ? INTL_IDNA_VARIANT_UTS46 : 0);
            if (is_string($ascii)) {
                $host = $ascii;
            }
        }
        $port = isset($parts['port']) ? (int) $parts['port'] : 0;
        return $port && $port !== 80 && $port !== 443 ? $host . ':' . $port : $host;
    }

    /** The version on disk: the plugin header or style.css, never what PHP loaded earlier. */
    public function installed_version(): string
    {
        $file = $this->type === 'theme' ? trailingslashit(dirname($this->file)) . 'style.css' : $this->file;
        clearstatcache(true, $file);
        $data = get_file_data($file, ['Version' => 'Version']);
        return (string) ($data['Version'] ?? '');
    }

    /**
     * What the site runs, for the store's field report (docs/distribution.md section 12): WordPress's
     * and PHP's versions, each left out when it does not follow the store's rules.
     */
    private function platform_fields(): array
    {
        $fields = ['platform' => 'wordpress'];
        $wp = (string) get_bloginfo('version');
        if (preg_match('/^[0-9][0-9A-Za-z.+_-]{0,63}$/', $wp)) {
            $fields['platform_version'] = $wp;
        }
        if (preg_match('/^[0-9][0-9A-Za-z.+_-]{0,63}$/', PHP_VERSION)) {
            $fields['php_version'] = PHP_VERSION;
        }
        return $fields;
    }

    /** The installed version when it follows the store's version rule, for validate. */
    private function reported_version(): array
    {
        $version = $this->installed_version();
        return preg_match('/^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$/', $version) ? ['version' => $version] : [];
    }

    private function now(): int
    {
        return time();
    }

    private function backed_off(array $state): bool
    {
        return isset($state['backoff_until']) && $this->now() < (int) $state['backoff_until'];
    }

    /** Remembers a 429's `retry_after` (docs/distribution.md section 7). */
    private function note_rate_limit(array $answer): void
    {
        $data = $answer['body']['data'] ?? [];
        $retry = is_array($data) && isset($data['retry_after']) ? (int) $data['retry_after'] : 60;
        $this->update_state(['backoff_until' => $this->now() + max(1, min(3600, $retry))]);
    }

    private function identity(): array
    {
        if (!$this->options['license'] || $this->license_key() === '') {
            return [];
        }
        return [
            'license_key' => $this->license_key(),
            'site_url' => $this->site_url(),
            'installation_id' => $this->installation_id(),
        ];
    }

    // ─── License: activation and deactivation ──────────────────────────────────────────────────

    /**
     * Activates this site with `$key` (docs/licensing.md section 2). On success the key is kept;
     * a refusal keeps nothing and answers the code and message to show.
     *
     * @return array{ok:bool, code?:string, message?:string, renewal_url?:string}
     */
    public function activate(string $key): array
    {
        $answer = $this->client->post('/licenses/activate', [
            'license_key' => $key,
            'domain' => $this->site_url(),
            'installation_id' => $this->installation_id(),
        ]);
        if ($answer['status'] === 200 && !empty($answer['body']['success'])) {
            $this->update_state([
                'license_key' => $key,
                'activation_id' => (int) ($answer['body']['activation_id'] ?? 0),
                'check' => null,
                'check_error' => null,
                'validation' => null,
                'next_check_at' => 0,
            ]);
            delete_site_transient($this->type === 'theme' ? 'update_themes' : 'update_plugins');
            return ['ok' => true];
        }
        if ($answer['status'] === 429) {
            $this->note_rate_limit($answer);
        }
        $code = $answer['status'] === 200 ? (string) ($answer['body']['code'] ?? 'unknown') : Client::code($answer);
        return $this->refusal($code, $answer);
    }

    /** Gives this site's seat back (docs/licensing.md section 4); the key stays for a later reactivation. */
    public function deactivate_license(): void
    {
        $state = $this->state();
        $key = $this->license_key();
        if ($key === '' || empty($state['activation_id'])) {
            return;
        }
        $answer = $this->client->post('/licenses/deactivate', [
            'license_key' => $key,
            'activation_id' => (int) $state['activation_id'],
        ], 10);
        if ($answer['status'] === 200 || in_array(Client::code($answer), ['no_activation', 'invalid_license'], true)) {
            $this->update_state(['activation_id' => 0, 'validation' => null]);
        }
    }

    /** Activates again with the kept key when the plugin is activated or the theme switched to. */
    public function reactivate(): void
    {
        $key = $this->license_key();
        if ($key !== '' && empty($this->state()['activation_id'])) {
            $this->activate($key);
        }
    }

    /** Plugin activation: activates the license again and names the uninstall hook (kept by WordPress). */
    public function on_activate(): void
    {
        register_uninstall_hook($this->file, [self::class, 'uninstall']);
        $this->reactivate();
    }

    public function on_switch_theme($new_name = '', $new_theme = null, $old_theme = null): void
    {
        if (is_object($old_theme) && method_exists($old_theme, 'get_stylesheet') && $old_theme->get_stylesheet() === $this->id) {
            $this->deactivate_license();
        }
    }

    /** Uninstall hook (a static callable, as WordPress stores it): deactivates and forgets the key. */
    public static function uninstall(): void
    {
        $action = current_action();
        foreach (self::$instances as $updater) {
            if ($updater->type === 'plugin' && $action === 'uninstall_' . $updater->id) {
                $updater->deactivate_license();
                delete_option($updater->option_name());
            }
        }
    }

    // ─── License: validation and offline receipts ──────────────────────────────────────────────

    /**
     * Whether this site holds a valid license: the store's answer of the last 12 hours, or through
     * an outage the offline receipt while it lasts (docs/licensing.md, 'Offline receipts').
     *
     * @return array{valid:bool, code:string, message:string, renewal_url:string, offline:bool}
     */
    public function license_status(): array
    {
        $key = $this->license_key();
        if ($key === '') {
            return $this->status(false, 'missing_key', null, null, false);
        }
        $state = $this->state();
        $cached = $state['validation'] ?? null;
        if (is_array($cached) && $this->now() - (int) ($cached['at'] ?? 0) < self::VALIDATE_TTL) {
            return $cached['status'];
        }
        if ($this->backed_off($state)) {
            return $this->offline_status($state);
        }
        $request = [
            'license_key' => $key,
            'domain' => $this->site_url(),
            'installation_id' => $this->installation_id(),
            'receipt' => true,
        ];
        $answer = $this->client->post('/licenses/validate', $request + $this->reported_version() + $this->platform_fields());
        if ($answer['status'] === 400 && Client::code($answer) === 'invalid_parameters') {
            // A store older than the field report refuses its fields: ask again without them.
            $answer = $this->client->post('/licenses/validate', $request);
        }
        if ($answer['status'] === 429) {
            $this->note_rate_limit($answer);
            return $this->offline_status($state);
        }
        if (Client::is_outage($answer)) {
            return $this->offline_status($state);
        }
        $body = $answer['body'];
        $valid = $answer['status'] === 200 && ($body['valid'] ?? false) === true && ($body['effective_status'] ?? '') === 'valid';
        $code = $valid ? 'valid' : Client::code($answer);
        $status = $this->status($valid, $code, $body['message'] ?? null, $body['renewal_url'] ?? null, false);
        $changes = ['validation' => ['at' => $this->now(), 'status' => $status]];
        if ($valid && isset($body['receipt']) && is_array($body['receipt'])) {
            $changes['receipt'] = $body['receipt'];
        } elseif (!$valid) {
            $changes['receipt'] = null;
        }
        $this->update_state($changes);
        if (isset($changes['receipt']['signing_key_id'])) {
            // The keys are kept with the receipt: an outage is exactly when they cannot be fetched.
            $this->signing_keys(!$this->has_key($this->signing_keys(false), $changes['receipt']['signing_key_id']));
        }
        return $status;
    }

    /** Public shorthand for feature gates: a valid license, online or by receipt. */
    public function is_licensed(): bool
    {
        return $this->license_status()['valid'];
    }

    private function offline_status(array $state): array
    {
        $receipt = $state['receipt'] ?? null;
        if (is_array($receipt)) {
            $keys = $this->signing_keys(false);
            $claims = Receipt::check($receipt, $keys, $this->installation_id(), $this->normalised_domain(), $this->now());
            if ($claims !== null) {
                return $this->status(true, 'valid', null, null, true);
            }
        }
        return $this->status(false, 'store_unreachable', null, null, true);
    }

    private function status(bool $valid, string $code, $message, $renewal, bool $offline): array
    {
        return [
            'valid' => $valid,
            'code' => $code,
            'message' => $valid ? '' : Messages::of($code, is_string($message) ? $message : null),
            'renewal_url' => $this->renewal_url($code, $renewal),
            'offline' => $offline,
        ];
    }

    private function renewal_url(string $code, $from_store): string
    {
        if (is_string($from_store) && preg_match('#^https?://#i', $from_store)) {
            return esc_url_raw($from_store);
        }
        return Messages::renewable($code) ? esc_url_raw((string) $this->options['renewal_url']) : '';
    }

    private function refusal(string $code, array $answer): array
    {
        $body = $answer['body'] ?? [];
        return [
            'ok' => false,
            'code' => $code,
            'message' => Messages::of($code, isset($body['message']) && is_string($body['message']) ? $body['message'] : null),
            'renewal_url' => $this->renewal_url($code, $body['renewal_url'] ?? ($body['data']['renewal_url'] ?? null)),
        ];
    }

    // ─── Update check ──────────────────────────────────────────────────────────────────────────

    /** Fields of a check answer that are never stored: the single-use URL and its token's facts. */
    const NEVER_STORED = ['download_url', 'token_expires_at', 'token_binding_version', 'external_link_url'];

    /**
     * The store's update answer for the version on disk: fresh for 10 minutes, then asked again;
     * through an outage or a 429 the last good answer for up to `grace_days`. Answers
     * `['answer' => array]`, `['error' => array]` (the store refused) or `[]` (nothing known).
     */
    public function check(bool $force = false): array
    {
        $version = $this->installed_version();
        $state = $this->state();
        $now = $this->now();
        $last = $state['check'] ?? null;
        $fresh = is_array($last) && ($last['version'] ?? null) === $version && $now - (int) ($last['at'] ?? 0) < self::CHECK_TTL;
        $error = $state['check_error'] ?? null;
        $fresh_error = is_array($error) && ($error['version'] ?? null) === $version && $now - (int) ($error['at'] ?? 0) < self::CHECK_TTL;
        if (!$force && $fresh) {
            return ['answer' => $last['answer']];
        }
        if (!$force && $fresh_error) {
            return ['error' => $error];
        }
        if ($this->backed_off($state) || (!$force && $now < (int) ($state['next_check_at'] ?? 0))) {
            return $this->last_good($state, $version);
        }
        $answer = $this->client->post(
            '/software/check',
            ['slug' => $this->slug, 'version' => $version] + $this->identity() + $this->platform_fields()
        );
        if ($answer['status'] === 200 && !empty($answer['body']['success'])) {
            $body = array_diff_key($answer['body'], array_flip(self::NEVER_STORED));
            $this->update_state([
                'check' => ['at' => $now, 'version' => $version, 'answer' => $body],
                'check_error' => null,
                'next_check_at' => 0,
            ]);
            return ['answer' => $body];
        }
        if ($answer['status'] === 429) {
            $this->note_rate_limit($answer);
            return $this->last_good($state, $version);
        }
        if (Client::is_outage($answer) || in_array(Client::code($answer), ['module_disabled', 'licensing_unavailable'], true)) {
            $this->update_state(['next_check_at' => $now + self::OUTAGE_RETRY]);
            return $this->last_good($state, $version);
        }
        // The store said no (an expired license, a revoked one…): the last good answer no longer
        // stands, so no update is offered from it.
        $code = Client::code($answer);
        $refusal = $this->refusal($code, $answer);
        $body = $answer['body'];
        $available = $body['available_version'] ?? ($body['data']['available_version'] ?? null);
        $error = [
            'at' => $now,
            'version' => $version,
            'code' => $code,
            'message' => $refusal['message'],
            'renewal_url' => $refusal['renewal_url'],
            'available_version' => is_string($available) ? $available : null,
        ];
        $this->update_state(['check' => null, 'check_error' => $error]);
        return ['error' => $error];
    }

    private function last_good(array $state, string $version): array
    {
        $last = $state['check'] ?? null;
        $grace = max(0, (int) $this->options['grace_days']) * 86400;
        if (is_array($last) && ($last['version'] ?? null) === $version && $this->now() - (int) ($last['at'] ?? 0) < $grace) {
            return ['answer' => $last['answer'], 'stale' => true];
        }
        $error = $state['check_error'] ?? null;
        return is_array($error) ? ['error' => $error] : [];
    }

    /**
     * The address WordPress keeps as the update's `package`. It carries no token: the real,
     * single-use URL is asked for when the upgrader downloads (filter_pre_download), so an update
     * cached for hours still installs, and no screen or log shows a usable URL.
     */
    public function package_marker(): string
    {
        return $this->client->base() . '/software/package?slug=' . rawurlencode($this->slug);
    }

    /** pre_set_site_transient_update_plugins / _themes: this product's entry in WordPress's update list. */
    public function filter_update_transient($transient)
    {
        if (!is_object($transient)) {
            return $transient;
        }
        $version = $this->installed_version();
        if ($version === '') {
            return $transient;
        }
        $result = $this->check();
        $entry = null;
        $offered = null;
        if (isset($result['answer'])) {
            $answer = $result['answer'];
            $new = (string) ($answer['latest_version'] ?? $version);
            if (!empty($answer['eligible']) && version_compare($new, $version, '>')) {
                $offered = $new;
                $package = empty($answer['manual_download_only']) ? $this->package_marker() : '';
                $entry = $this->entry($new, $package, $answer, '');
            } elseif (!empty($answer['available']) && is_string($answer['available_version'] ?? null)
                && version_compare($answer['available_version'], $version, '>')) {
                // An update exists that this license may not take: shown, without a package.
                $offered = $answer['available_version'];
                $code = (string) ($answer['eligibility_reason'] ?? 'release_not_entitled');
                $message = Messages::of($code, isset($answer['message']) && is_string($answer['message']) ? $answer['message'] : null);
                $entry = $this->entry($offered, '', $answer, $message);
            }
        } elseif (isset($result['error']['available_version']) && is_string($result['error']['available_version'])
            && version_compare($result['error']['available_version'], $version, '>')) {
            $offered = $result['error']['available_version'];
            $entry = $this->entry($offered, '', [], (string) $result['error']['message']);
        }
        if ($this->type === 'theme') {
            $transient->checked[$this->id] = $version;
            unset($transient->response[$this->id], $transient->no_update[$this->id]);
            if ($offered !== null) {
                $transient->response[$this->id] = $entry;
            } else {
                $transient->no_update[$this->id] = $this->entry($version, '', $result['answer'] ?? [], '');
            }
        } else {
            $transient->checked[$this->id] = $version;
            unset($transient->response[$this->id], $transient->no_update[$this->id]);
            if ($offered !== null) {
                $transient->response[$this->id] = (object) $entry;
            } else {
                $transient->no_update[$this->id] = (object) $this->entry($version, '', $result['answer'] ?? [], '');
            }
        }
        return $transient;
    }

    /** One update entry in the shape WordPress's update transients use for a plugin or a theme. */
    private function entry(string $version, string $package, array $answer, string $notice): array
    {
        $url = $this->url_field($answer, 'homepage') ?: (string) ($answer['changelog_url'] ?? $this->store_url);
        $meta = [
            'requires' => $this->text_field($answer, 'requires'),
            'requires_php' => $this->text_field($answer, 'requires_php'),
        ];
        if ($this->type === 'theme') {
            return ['theme' => $this->id, 'new_version' => $version, 'url' => $url, 'package' => $package] + $meta;
        }
        return [
            'id' => $this->store_host . '/' . $this->slug,
            'slug' => $this->wp_slug,
            'plugin' => $this->id,
            'new_version' => $version,
            'url' => $url,
            'package' => $package,
            'tested' => $this->text_field($answer, 'tested'),
            'icons' => $this->image_set($answer, 'icons'),
            'banners' => $this->image_set($answer, 'banners'),
            'banners_rtl' => [],
            'compatibility' => new \stdClass(),
            'upgrade_notice' => $notice,
        ] + $meta;
    }

    private function text_field(array $answer, string $field): string
    {
        $value = $answer[$field] ?? '';
        return is_string($value) ? sanitize_text_field($value) : '';
    }

    private function url_field(array $answer, string $field): string
    {
        $value = $answer[$field] ?? '';
        return is_string($value) && preg_match('#^https?://#i', $value) ? esc_url_raw($value) : '';
    }

    /** Icons or banners: `{size: url}` with http(s) URLs only. */
    private function image_set(array $answer, string $field): array
    {
        $set = [];
        if (isset($answer[$field]) && is_array($answer[$field])) {
            foreach ($answer[$field] as $size => $url) {
                if (is_string($size) && is_string($url) && preg_match('#^https?://#i', $url)) {
                    $set[sanitize_key($size)] = esc_url_raw($url);
                }
            }
        }
        return $set;
    }

    // ─── Details modal ─────────────────────────────────────────────────────────────────────────

    /** plugins_api: "View version details" from the update answer's metadata and the changelog feed. */
    public function filter_plugins_api($result, $action = '', $args = null)
    {
        if ($action !== 'plugin_information' || !is_object($args) || ($args->slug ?? '') !== $this->wp_slug) {
            return $result;
        }
        $check = $this->check();
        $answer = $check['answer'] ?? [];
        $changelog = $this->changelog();
        $latest = $changelog[0] ?? [];
        $author = $this->text_field($answer, 'author');
        $info = [
            'name' => $this->text_field($answer, 'name') ?: ($this->options['name'] ?: (string) ($answer['product']['name'] ?? $this->slug)),
            'slug' => $this->wp_slug,
            'version' => (string) ($answer['latest_version'] ?? ($latest['version'] ?? $this->installed_version())),
            'author' => $author !== '' ? esc_html($author) : '',
            'homepage' => $this->url_field($answer, 'homepage'),
            'requires' => $this->text_field($answer, 'requires'),
            'tested' => $this->text_field($answer, 'tested'),
            'requires_php' => $this->text_field($answer, 'requires_php'),
            'last_updated' => (string) ($answer['release_date'] ?? ($latest['release_date'] ?? '')),
            'icons' => $this->image_set($answer, 'icons'),
            'banners' => $this->image_set($answer, 'banners'),
            'sections' => [
                'description' => wpautop(esc_html(is_string($answer['description'] ?? null) ? $answer['description'] : '')),
                'changelog' => $this->changelog_html($changelog),
            ],
            'external' => true,
        ];
        return (object) $info;
    }

    /** The changelog feed (docs/distribution.md section 6), kept an hour. */
    private function changelog(): array
    {
        $cache_key = 'tollgate_changelog_' . md5($this->store_url . '|' . $this->slug);
        $cached = get_site_transient($cache_key);
        if (is_array($cached)) {
            return $cached;
        }
        $answer = $this->client->get('/software/changelog', ['slug' => $this->slug]);
        $versions = $answer['status'] === 200 && isset($answer['body']['versions']) && is_array($answer['body']['versions'])
            ? $answer['body']['versions'] : [];
        set_site_transient($cache_key, $versions, HOUR_IN_SECONDS);
        return $versions;
    }

    private function changelog_html(array $versions): string
    {
        $html = '';
        foreach (array_slice($versions, 0, 20) as $entry) {
            if (!is_array($entry) || !is_string($entry['version'] ?? null)) {
                continue;
            }
            $html .= '<h4>' . esc_html($entry['version']);
            if (is_string($entry['release_date'] ?? null)) {
                $html .= ' <small>(' . esc_html($entry['release_date']) . ')</small>';
            }
            $html .= '</h4>';
            $log = $entry['changelog'] ?? [];
            if (is_array($log) && is_string($log['narrative'] ?? null) && $log['narrative'] !== '') {
                $html .= wpautop(esc_html($log['narrative']));
            }
            if (is_array($log) && !empty($log['points']) && is_array($log['points'])) {
                $html .= '<ul>';
                foreach ($log['points'] as $point) {
                    if (is_array($point) && is_string($point['text'] ?? null)) {
                        $type = is_string($point['type'] ?? null) ? '<strong>' . esc_html(ucfirst($point['type'])) . ':</strong> ' : '';
                        $html .= '<li>' . $type . esc_html($point['text']) . '</li>';
                    }
                }
                $html .= '</ul>';
            }
        }
        return $html;
    }

    // ─── Download ──────────────────────────────────────────────────────────────────────────────

    /**
     * upgrader_pre_download: for this product's package marker, asks the package route for a fresh
     * single-use URL now (docs/distribution.md section 2) and lets WordPress's own download_url()
     * fetch it, checking Content-MD5 and, for a signed release, the Ed25519 signature against the
     * store's keys with no soft failure. The URL is never shown, stored or logged.
     */
    public function filter_pre_download($reply, $package = '', $upgrader = null, $hook_extra = [])
    {
        if ($reply !== false || $package !== $this->package_marker()) {
            return $reply;
        }
        $failed = is_object($upgrader) && isset($upgrader->strings['download_failed'])
            ? $upgrader->strings['download_failed'] : __('Download failed.', 'tollgate-updater');
        $state = $this->state();
        if ($this->backed_off($state)) {
            return $this->download_error('rate_limited', $failed, Messages::text('rate_limited'));
        }
        $answer = $this->client->post('/software/package', [
            'slug' => $this->slug,
            'purpose' => 'update',
            'current_version' => $this->installed_version(),
        ] + $this->identity());
        if ($answer['status'] !== 200 || empty($answer['body']['success'])) {
            if ($answer['status'] === 429) {
                $this->note_rate_limit($answer);
            }
            $code = Client::code($answer);
            return $this->download_error($code, $failed, $this->refusal($code, $answer)['message']);
        }
        $body = $answer['body'];
        if (!empty($body['manual_download_only']) || !is_string($body['download_url'] ?? null)) {
            return $this->download_error('manual_download_only', $failed, Messages::text('manual_download_only'));
        }
        $signed = is_string($body['signature'] ?? null) && $body['signature'] !== '';
        $keys = [];
        if ($signed) {
            $keys = $this->signing_keys(false);
            if (!$this->has_key($keys, $body['signing_key_id'] ?? null)) {
                $keys = $this->signing_keys(true);
            }
            if (!$keys) {
                return $this->download_error('signature_unavailable', $failed, Messages::text('signature_unavailable'));
            }
        }
        // Only this download trusts the store's keys: WordPress's list is global, and a key of this
        // store has no business vouching for packages from elsewhere.
        $trust = static function ($trusted) use ($keys) {
            foreach ($keys as $key) {
                $trusted[] = $key['public_key'];
            }
            return $trusted;
        };
        if ($signed) {
            add_filter('wp_trusted_keys', $trust);
        }
        if (!function_exists('download_url')) {
            require_once ABSPATH . 'wp-admin/includes/file.php';
        }
        $file = download_url($body['download_url'], 300, $signed);
        if ($signed) {
            remove_filter('wp_trusted_keys', $trust);
        }
        if (is_wp_error($file)) {
            $inner = $file;
            if ($inner->get_error_data('softfail-filename')) {
                @unlink($inner->get_error_data('softfail-filename'));
            }
            return $this->download_error((string) $inner->get_error_code(), $failed, wp_strip_all_tags($inner->get_error_message()));
        }
        $sha256 = $body['file_sha256'] ?? null;
        if (is_string($sha256) && !hash_equals(strtolower($sha256), (string) hash_file('sha256', $file))) {
            @unlink($file);
            return $this->download_error('checksum_mismatch', $failed, Messages::text('checksum_mismatch'));
        }
        return $file;
    }

    /**
     * A failed download as the upgrader shows it: WordPress's "Download failed." and the reason,
     * printed once by the upgrader's skin (the reason is its data), under the reason's own code
     * (the store's code, or WordPress's `md5_mismatch`, `signature_verification_failed`…).
     */
    private function download_error(string $code, string $failed, string $reason): \WP_Error
    {
        return new \WP_Error($code !== '' ? $code : 'download_failed', $failed, $reason);
    }

    private function has_key(array $keys, $id): bool
    {
        foreach ($keys as $key) {
            if (($key['id'] ?? null) === $id) {
                return true;
            }
        }
        return false;
    }

    /** The store's public keys (GET /v1/software/signing-keys), kept 12 hours. */
    public function signing_keys(bool $refresh): array
    {
        $state = $this->state();
        $cached = $state['keys'] ?? null;
        if (!$refresh && is_array($cached) && $this->now() - (int) ($cached['at'] ?? 0) < self::KEYS_TTL) {
            return $cached['list'];
        }
        $answer = $this->client->get('/software/signing-keys');
        if ($answer['status'] !== 200 || !isset($answer['body']['keys']) || !is_array($answer['body']['keys'])) {
            return is_array($cached) ? $cached['list'] : [];
        }
        $list = [];
        foreach ($answer['body']['keys'] as $key) {
            if (is_array($key) && is_string($key['id'] ?? null) && is_string($key['public_key'] ?? null)) {
                $raw = base64_decode($key['public_key'], true);
                if ($raw !== false && strlen($raw) === 32) {
                    $list[] = ['id' => $key['id'], 'public_key' => $key['public_key']];
                }
            }
        }
        $this->update_state(['keys' => ['at' => $this->now(), 'list' => $list]]);
        return $list;
    }

    /** wp_signature_hosts: WordPress checks signatures of downloads from the store's host. */
    public function filter_signature_hosts($hosts)
    {
        $hosts = (array) $hosts;
        if ($this->store_host !== '' && !in_array($this->store_host, $hosts, true)) {
            $hosts[] = $this->store_host;
        }
        return $hosts;
    }

    /** wp_signature_softfail: a signature that does not verify is a failure for the store's host. */
    public function filter_signature_softfail($softfail, $url = '')
    {
        return strtolower((string) wp_parse_url((string) $url, PHP_URL_HOST)) === $this->store_host ? false : $softfail;
    }

    /** The store the vendor named may be on a private address (WordPress's safe requests refuse those). */
    public function filter_host_is_external($external, $host = '')
    {
        return strtolower((string) $host) === $this->store_host ? true : $external;
    }

    /** …and on a port of its own. */
    public function filter_safe_ports($ports, $host = '')
    {
        $port = (int) wp_parse_url($this->store_url, PHP_URL_PORT);
        if ($port && strtolower((string) $host) === $this->store_host) {
            $ports = (array) $ports;
            $ports[] = $port;
        }
        return $ports;
    }

    // ─── Screens ───────────────────────────────────────────────────────────────────────────────

    private function action(): string
    {
        return 'tollgate_license_' . $this->slug;
    }

    private function page(): string
    {
        return 'tollgate-' . $this->slug;
    }

    private function page_url(): string
    {
        return $this->type === 'theme'
            ? admin_url('themes.php?page=' . $this->page())
            : admin_url('options-general.php?page=' . $this->page());
    }

    private function product_name(): string
    {
        if ($this->options['name'] !== '') {
            return (string) $this->options['name'];
        }
        if ($this->type === 'theme') {
            $data = get_file_data(trailingslashit(dirname($this->file)) . 'style.css', ['Name' => 'Theme Name']);
        } else {
            $data = get_file_data($this->file, ['Name' => 'Plugin Name']);
        }
        return (string) ($data['Name'] ?: $this->slug);
    }

    public function admin_menu(): void
    {
        /* translators: %s: the plugin's or theme's name */
        $title = sprintf(__('%s license', 'tollgate-updater'), $this->product_name());
        if ($this->type === 'theme') {
            add_theme_page($title, $title, $this->options['capability'], $this->page(), [$this, 'render_page']);
        } else {
            add_options_page($title, $title, $this->options['capability'], $this->page(), [$this, 'render_page']);
        }
    }

    public function action_links($links)
    {
        $links = (array) $links;
        if ($this->options['license'] && current_user_can($this->options['capability'])) {
            $links[] = '<a href="' . esc_url($this->page_url()) . '">' . esc_html__('License', 'tollgate-updater') . '</a>';
        }
        return $links;
    }

    /** The key as shown back: its last four characters only. */
    private function masked_key(): string
    {
        $key = $this->license_key();
        return $key === '' ? '' : str_repeat('•', 8) . substr($key, -4);
    }

    public function render_page(): void
    {
        if (!current_user_can($this->options['capability'])) {
            wp_die(esc_html__('Sorry, you are not allowed to manage this license.', 'tollgate-updater'), 403);
        }
        $masked = $this->masked_key();
        echo '<div class="wrap"><h1>' . esc_html(sprintf(__('%s license', 'tollgate-updater'), $this->product_name())) . '</h1>';
        $this->print_flash();
        echo '<form method="post" action="' . esc_url(admin_url('admin-post.php')) . '">';
        echo '<input type="hidden" name="action" value="' . esc_attr($this->action()) . '">';
        wp_nonce_field($this->action());
        echo '<table class="form-table" role="presentation"><tr><th scope="row"><label for="tollgate-key">'
            . esc_html__('License key', 'tollgate-updater') . '</label></th><td>';
        echo '<input type="text" class="regular-text" id="tollgate-key" name="tollgate_license_key" value="" autocomplete="off" spellcheck="false" maxlength="255" placeholder="' . esc_attr($masked) . '">';
        if ($masked !== '') {
            echo '<p class="description">' . esc_html(sprintf(__('Saved key: %s', 'tollgate-updater'), $masked)) . '</p>';
        }
        echo '</td></tr></table>';
        submit_button(__('Save and activate', 'tollgate-updater'), 'primary', 'tollgate_save', false);
        if ($masked !== '') {
            echo ' ';
            submit_button(__('Deactivate and remove the key', 'tollgate-updater'), 'secondary', 'tollgate_remove', false);
        }
        echo '</form></div>';
    }

    /** admin-post: saves the key and activates this site with it (nonce and capability checked). */
    public function save_license(): void
    {
        if (!current_user_can($this->options['capability'])) {
            wp_die(esc_html__('Sorry, you are not allowed to manage this license.', 'tollgate-updater'), 403);
        }
        check_admin_referer($this->action());
        if (isset($_POST['tollgate_remove'])) {
            $this->deactivate_license();
            $this->update_state(['license_key' => '', 'activation_id' => 0, 'check' => null, 'check_error' => null, 'validation' => null, 'receipt' => null]);
            $this->flash(['ok' => true, 'message' => __('The license key was removed and this site deactivated.', 'tollgate-updater')]);
        } else {
            $raw = isset($_POST['tollgate_license_key']) && is_string($_POST['tollgate_license_key'])
                ? wp_unslash($_POST['tollgate_license_key']) : '';
            $key = trim(sanitize_text_field($raw));
            if ($key === '' || strlen($key) > 255) {
                $this->flash(['ok' => false, 'message' => Messages::text('missing_key')]);
            } else {
                $result = $this->activate($key);
                $this->flash($result['ok']
                    ? ['ok' => true, 'message' => __('The license is active on this site.', 'tollgate-updater')]
                    : ['ok' => false, 'message' => $result['message'], 'renewal_url' => $result['renewal_url']]);
            }
        }
        wp_safe_redirect($this->page_url());
        exit;
    }

    private function flash(array $notice): void
    {
        set_transient('tollgate_flash_' . $this->slug . '_' . get_current_user_id(), $notice, 60);
    }

    private function print_flash(): void
    {
        $name = 'tollgate_flash_' . $this->slug . '_' . get_current_user_id();
        $notice = get_transient($name);
        if (is_array($notice)) {
            delete_transient($name);
            $this->print_notice(!empty($notice['ok']) ? 'success' : 'error', (string) $notice['message'], (string) ($notice['renewal_url'] ?? ''), '<div class="notice notice-%s"><p>%s</p></div>');
        }
    }

    /** What the site's administrator should know about this license now, or null when all is well. */
    public function notice(): ?array
    {
        if (!$this->options['license']) {
            return null;
        }
        if ($this->license_key() === '') {
            return ['message' => Messages::text('missing_key'), 'renewal_url' => '', 'link' => $this->page_url()];
        }
        $error = $this->state()['check_error'] ?? null;
        if (is_array($error)) {
            $message = (string) $error['message'];
            if (is_string($error['available_version'] ?? null)) {
                /* translators: 1: a version number, 2: why it cannot be installed */
                $message = sprintf(__('Version %1$s is available. %2$s', 'tollgate-updater'), $error['available_version'], $message);
            }
            return ['message' => $message, 'renewal_url' => (string) $error['renewal_url'], 'link' => $this->page_url()];
        }
        $answer = $this->state()['check']['answer'] ?? null;
        if (is_array($answer) && empty($answer['eligible']) && !empty($answer['available']) && is_string($answer['available_version'] ?? null)) {
            $code = (string) ($answer['eligibility_reason'] ?? 'release_not_entitled');
            $message = sprintf(__('Version %1$s is available. %2$s', 'tollgate-updater'), $answer['available_version'],
                Messages::of($code, isset($answer['message']) && is_string($answer['message']) ? $answer['message'] : null));
            return ['message' => $message, 'renewal_url' => $this->renewal_url($code, $answer['renewal_url'] ?? null), 'link' => $this->page_url()];
        }
        return null;
    }

    private function print_notice(string $kind, string $message, string $renewal, string $format): void
    {
        $text = esc_html($message);
        if ($renewal !== '') {
            $text .= ' <a href="' . esc_url($renewal) . '" target="_blank" rel="noopener noreferrer">' . esc_html__('Renew your license', 'tollgate-updater') . '</a>';
        }
        printf($format, esc_attr($kind), $text);
    }

    /** after_plugin_row: the license's state under the plugin on the plugins screen. */
    public function plugin_row(): void
    {
        $notice = $this->notice();
        if ($notice === null || !current_user_can($this->options['capability'])) {
            return;
        }
        $text = esc_html($notice['message']);
        if ($notice['renewal_url'] !== '') {
            $text .= ' <a href="' . esc_url($notice['renewal_url']) . '" target="_blank" rel="noopener noreferrer">' . esc_html__('Renew your license', 'tollgate-updater') . '</a>';
        }
        $text .= ' <a href="' . esc_url($notice['link']) . '">' . esc_html__('License settings', 'tollgate-updater') . '</a>';
        echo '<tr class="plugin-update-tr active tollgate-license-row"><td colspan="4" class="plugin-update colspanchange">'
            . '<div class="update-message notice inline notice-warning notice-alt"><p>' . $text . '</p></div></td></tr>';
    }

    /** admin_notices: for a theme on the themes and updates screens; for both on the license page. */
    public function admin_notices(): void
    {
        $screen = function_exists('get_current_screen') ? get_current_screen() : null;
        $id = $screen ? (string) $screen->id : '';
        $here = $this->type === 'theme' ? in_array($id, ['themes', 'update-core'], true) : $id === 'update-core';
        if (!$here || !current_user_can($this->options['capability'])) {
            return;
        }
        $notice = $this->notice();
        if ($notice !== null) {
            $this->print_notice('warning', sprintf('%s: %s', $this->product_name(), $notice['message']), $notice['renewal_url'], '<div class="notice notice-%s"><p>%s</p></div>');
        }
    }
}
