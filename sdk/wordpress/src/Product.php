<?php

namespace Tollgate;

/**
 * What one registration names: the store, the product's slug there, the plugin's or theme's file
 * and how WordPress knows it, and the vendor's options. Everything else reads these from here.
 */
final class Product
{
    /** @var string */
    public $store_url;
    /** @var string */
    public $store_host;
    /** @var string the product's software slug at the store */
    public $slug;
    /** @var string */
    public $file;
    /** @var string 'plugin' or 'theme' */
    public $type;
    /** @var string plugin basename (dir/main.php) or theme stylesheet */
    public $id;
    /** @var string the directory name WordPress knows the plugin or theme by */
    public $wp_slug;
    /** @var array<string,mixed> */
    public $options;
    /**
     * Whether the license belongs to the whole network: a plugin network-activated on a multisite
     * (docs/sdk-wordpress.md, 'Multisite'). Its key, activation and state are the network's, one
     * activation for the network's main address, managed in the network admin.
     *
     * @var bool
     */
    public $network = false;

    public function __construct(string $store_url, string $slug, string $file, array $options)
    {
        $this->store_url = rtrim($store_url, '/');
        $this->store_host = strtolower((string) wp_parse_url($this->store_url, PHP_URL_HOST));
        $this->slug = $slug;
        $this->file = $file;
        $this->options = $options + [
            'license' => true,
            'renewal_url' => '',
            'upgrade_url' => '',
            'capability' => 'manage_options',
            'grace_days' => 7,
            'name' => '',
            'legacy_key_option' => '',
        ];
        $this->type = isset($options['type']) ? (string) $options['type'] : self::detect_type($file);
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
    private static function detect_type(string $file): string
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

    public function licensed(): bool
    {
        return (bool) $this->options['license'];
    }

    public function capability(): string
    {
        return $this->network ? 'manage_network_options' : (string) $this->options['capability'];
    }

    /** The file that carries the version: the plugin's main file or the theme's style.css. */
    private function header_file(): string
    {
        return $this->type === 'theme' ? trailingslashit(dirname($this->file)) . 'style.css' : $this->file;
    }

    /** The version on disk: the plugin header or style.css, never what PHP loaded earlier. */
    public function installed_version(): string
    {
        $file = $this->header_file();
        clearstatcache(true, $file);
        if (!is_file($file)) {
            // Deleted (delete_plugins() writes the update list again after removing the files).
            return '';
        }
        $data = get_file_data($file, ['Version' => 'Version']);
        return (string) ($data['Version'] ?? '');
    }

    public function name(): string
    {
        if ($this->options['name'] !== '') {
            return (string) $this->options['name'];
        }
        if (!is_file($this->header_file())) {
            return $this->slug;
        }
        $data = get_file_data($this->header_file(), ['Name' => $this->type === 'theme' ? 'Theme Name' : 'Plugin Name']);
        return (string) ($data['Name'] ?: $this->slug);
    }

    /** The address the site is activated with: the network's main site for a network license. */
    public function site_url(): string
    {
        return $this->network ? network_home_url('/') : home_url('/');
    }

    /** The site's host as the store normalises it (docs/licensing.md, 'Domain normalisation'). */
    public function normalised_domain(): string
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

    /**
     * What the site runs, for the store's field report (docs/distribution.md section 12): WordPress's
     * and PHP's versions, each left out when it does not follow the store's rules.
     */
    public function platform_fields(): array
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
    public function reported_version(): array
    {
        $version = $this->installed_version();
        return preg_match('/^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$/', $version) ? ['version' => $version] : [];
    }

    /** The renewal link to show with `$code`: the store's own, else the vendor's option where renewing helps. */
    public function renewal_url(string $code, $from_store): string
    {
        if (is_string($from_store) && preg_match('#^https?://#i', $from_store)) {
            return esc_url_raw($from_store);
        }
        return Messages::renewable($code) ? esc_url_raw((string) $this->options['renewal_url']) : '';
    }

    /**
     * Where the customer changes the license's tier (docs/sdk-wordpress.md, 'Upgrades'): the
     * vendor's `upgrade_url`, else the store's My licenses page; '' when the option is false.
     */
    public function upgrade_url(): string
    {
        $option = $this->options['upgrade_url'];
        if ($option === false) {
            return '';
        }
        return esc_url_raw(is_string($option) && $option !== '' ? $option : $this->store_url . '/account/licenses');
    }

    /** A refusal of the store as the screens show it: its code, message and renewal link. */
    public function refusal(string $code, array $answer): array
    {
        $body = $answer['body'] ?? [];
        return [
            'ok' => false,
            'code' => $code,
            'message' => Messages::of($code, isset($body['message']) && is_string($body['message']) ? $body['message'] : null),
            'renewal_url' => $this->renewal_url($code, $body['renewal_url'] ?? ($body['data']['renewal_url'] ?? null)),
        ];
    }
}
