<?php

namespace Tollgate;

/**
 * The update check (POST /v1/software/check) into WordPress's update transients, and the
 * "View version details" modal from its metadata and the changelog feed.
 */
final class UpdateCheck
{
    /** How long an update answer is used before the store is asked again. */
    const CHECK_TTL = 600;
    /** How long the store is left alone after it could not be reached. */
    const OUTAGE_RETRY = 300;
    /** Fields of a check answer that are never stored: the single-use URL and its token's facts. */
    const NEVER_STORED = ['download_url', 'token_expires_at', 'token_binding_version', 'external_link_url'];

    /** @var Product */
    private $product;
    /** @var Settings */
    private $settings;
    /** @var Client */
    private $client;
    /** @var License */
    private $license;
    /** @var Cache */
    private $cache;
    /** @var bool whether this request has already asked the store past the cache */
    private $forced_once = false;

    public function __construct(Product $product, Settings $settings, Client $client, License $license, Cache $cache)
    {
        $this->product = $product;
        $this->settings = $settings;
        $this->client = $client;
        $this->license = $license;
        $this->cache = $cache;
    }

    /**
     * The store's update answer for the version on disk: fresh for 10 minutes, then asked again;
     * through an outage or a 429 the last good answer for up to `grace_days`. Answers
     * `['answer' => array]`, `['error' => array]` (the store refused) or `[]` (nothing known).
     */
    public function check(bool $force = false): array
    {
        $version = $this->product->installed_version();
        $state = $this->settings->all();
        $now = time();
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
        if ($this->settings->backed_off($state, $now)) {
            return $this->last_good($state, $version, true);
        }
        if (!$force && $now < (int) ($state['next_check_at'] ?? 0)) {
            return $this->last_good($state, $version, false);
        }
        $answer = $this->client->post(
            '/software/check',
            ['slug' => $this->product->slug, 'version' => $version] + $this->license->identity() + $this->product->platform_fields()
        );
        if ($answer['status'] === 200 && !empty($answer['body']['success'])) {
            $body = array_diff_key($answer['body'], array_flip(self::NEVER_STORED));
            $this->settings->update([
                'check' => ['at' => $now, 'version' => $version, 'answer' => $body],
                'check_error' => null,
                'next_check_at' => 0,
            ]);
            return ['answer' => $body];
        }
        if ($answer['status'] === 429) {
            $this->settings->note_rate_limit($answer, $now);
            return $this->last_good($state, $version, true);
        }
        if (Client::is_outage($answer) || in_array(Client::code($answer), ['module_disabled', 'licensing_unavailable'], true)) {
            $this->settings->update(['next_check_at' => $now + self::OUTAGE_RETRY]);
            return $this->last_good($state, $version, false);
        }
        // The store said no (an expired license, a revoked one…): the last good answer no longer
        // stands, so no update is offered from it.
        $code = Client::code($answer);
        $refusal = $this->product->refusal($code, $answer);
        $body = $answer['body'];
        $available = $body['available_version'] ?? ($body['data']['available_version'] ?? null);
        $available = is_string($available) ? $available : null;
        $error = [
            'at' => $now,
            'version' => $version,
            'code' => $code,
            'message' => Messages::with_version($code, isset($body['message']) && is_string($body['message']) ? $body['message'] : null, $available),
            'renewal_url' => $refusal['renewal_url'],
            'available_version' => $available,
        ];
        $this->settings->update(['check' => null, 'check_error' => $error]);
        return ['error' => $error];
    }

    /**
     * The last answer while the store cannot be asked: through an outage for up to `grace_days`;
     * while it rate-limits (`$limited`) whatever its age, since the store is there and said "later",
     * not "no": an update known before stays offered until the store answers again.
     */
    private function last_good(array $state, string $version, bool $limited): array
    {
        $last = $state['check'] ?? null;
        $grace = max(0, (int) $this->product->options['grace_days']) * 86400;
        if (is_array($last) && ($last['version'] ?? null) === $version && ($limited || time() - (int) ($last['at'] ?? 0) < $grace)) {
            return ['answer' => $last['answer'], 'stale' => true];
        }
        $error = $state['check_error'] ?? null;
        return is_array($error) ? ['error' => $error] : [];
    }

    /**
     * The address WordPress keeps as the update's `package`. It carries no token: the real,
     * single-use URL is asked for when the upgrader downloads (Download::filter_pre_download), so an
     * update cached for hours still installs, and no screen or log shows a usable URL.
     */
    public function package_marker(): string
    {
        return $this->client->base() . '/software/package?slug=' . rawurlencode($this->product->slug);
    }

    /** pre_set_site_transient_update_plugins / _themes: this product's entry in WordPress's update list. */
    public function filter_update_transient($transient)
    {
        if (!is_object($transient)) {
            return $transient;
        }
        $version = $this->product->installed_version();
        if ($version === '') {
            return $transient;
        }
        $result = $this->check($this->forced());
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
        $id = $this->product->id;
        $transient->checked[$id] = $version;
        unset($transient->response[$id], $transient->no_update[$id]);
        $plugin = $this->product->type !== 'theme';
        if ($offered !== null) {
            $transient->response[$id] = $plugin ? (object) $entry : $entry;
        } else {
            $current = $this->entry($version, '', $result['answer'] ?? [], '');
            $transient->no_update[$id] = $plugin ? (object) $current : $current;
        }
        return $transient;
    }

    /**
     * WordPress's "Check again" (update-core.php?force-check=1) asks the store now, past the SDK's
     * 10-minute answer, once per request (WordPress writes its update list twice while checking).
     * A 429's retry_after still holds.
     */
    private function forced(): bool
    {
        if ($this->forced_once || !is_admin() || empty($_GET['force-check']) || ($GLOBALS['pagenow'] ?? '') !== 'update-core.php'
            || !current_user_can($this->product->type === 'theme' ? 'update_themes' : 'update_plugins')) {
            return false;
        }
        $this->forced_once = true;
        return true;
    }

    /** One update entry in the shape WordPress's update transients use for a plugin or a theme. */
    private function entry(string $version, string $package, array $answer, string $notice): array
    {
        $url = self::url_field($answer, 'homepage') ?: (string) ($answer['changelog_url'] ?? $this->product->store_url);
        $meta = [
            'requires' => self::text_field($answer, 'requires'),
            'requires_php' => self::text_field($answer, 'requires_php'),
        ];
        if ($this->product->type === 'theme') {
            return ['theme' => $this->product->id, 'new_version' => $version, 'url' => $url, 'package' => $package] + $meta;
        }
        return [
            'id' => $this->product->store_host . '/' . $this->product->slug,
            'slug' => $this->product->wp_slug,
            'plugin' => $this->product->id,
            'new_version' => $version,
            'url' => $url,
            'package' => $package,
            'tested' => self::text_field($answer, 'tested'),
            'icons' => self::image_set($answer, 'icons'),
            'banners' => self::image_set($answer, 'banners'),
            'banners_rtl' => [],
            'compatibility' => new \stdClass(),
            'upgrade_notice' => $notice,
        ] + $meta;
    }

    private static function text_field(array $answer, string $field): string
    {
        $value = $answer[$field] ?? '';
        return is_string($value) ? sanitize_text_field($value) : '';
    }

    private static function url_field(array $answer, string $field): string
    {
        $value = $answer[$field] ?? '';
        return is_string($value) && preg_match('#^https?://#i', $value) ? esc_url_raw($value) : '';
    }

    /** Icons or banners: `{size: url}` with http(s) URLs only. */
    private static function image_set(array $answer, string $field): array
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

    /** plugins_api: "View version details" from the update answer's metadata and the changelog feed. */
    public function filter_plugins_api($result, $action = '', $args = null)
    {
        if ($action !== 'plugin_information' || !is_object($args) || ($args->slug ?? '') !== $this->product->wp_slug) {
            return $result;
        }
        $check = $this->check();
        $answer = $check['answer'] ?? [];
        $changelog = $this->changelog();
        $latest = $changelog[0] ?? [];
        $author = self::text_field($answer, 'author');
        $info = [
            'name' => self::text_field($answer, 'name') ?: ($this->product->options['name'] ?: (string) ($answer['product']['name'] ?? $this->product->slug)),
            'slug' => $this->product->wp_slug,
            'version' => (string) ($answer['latest_version'] ?? ($latest['version'] ?? $this->product->installed_version())),
            'author' => $author !== '' ? esc_html($author) : '',
            'homepage' => self::url_field($answer, 'homepage'),
            'requires' => self::text_field($answer, 'requires'),
            'tested' => self::text_field($answer, 'tested'),
            'requires_php' => self::text_field($answer, 'requires_php'),
            'last_updated' => (string) ($answer['release_date'] ?? ($latest['release_date'] ?? '')),
            'icons' => self::image_set($answer, 'icons'),
            'banners' => self::image_set($answer, 'banners'),
            'sections' => [
                'description' => wpautop(esc_html(is_string($answer['description'] ?? null) ? $answer['description'] : '')),
                'changelog' => self::changelog_html($changelog),
            ],
            'external' => true,
        ];
        return (object) $info;
    }

    /** The changelog feed (docs/distribution.md section 6), kept an hour. */
    private function changelog(): array
    {
        $cached = $this->cache->changelog();
        if ($cached !== null) {
            return $cached;
        }
        $answer = $this->client->get('/software/changelog', ['slug' => $this->product->slug]);
        $versions = $answer['status'] === 200 && isset($answer['body']['versions']) && is_array($answer['body']['versions'])
            ? $answer['body']['versions'] : [];
        $this->cache->keep_changelog($versions);
        return $versions;
    }

    private static function changelog_html(array $versions): string
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
                        $type = is_string($point['type'] ?? null) ? '<strong>' . esc_html(Messages::point_type($point['type'])) . ':</strong> ' : '';
                        $html .= '<li>' . $type . esc_html($point['text']) . '</li>';
                    }
                }
                $html .= '</ul>';
            }
        }
        return $html;
    }
}
