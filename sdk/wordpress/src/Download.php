<?php

namespace Tollgate;

/**
 * The download of an update: a fresh single-use URL asked for at the moment WordPress downloads
 * (POST /v1/software/package, docs/distribution.md section 2), fetched by WordPress's own
 * download_url() with the store's keys trusted for that download only, and the safe-request
 * filters that let it reach the store's own host and port.
 */
final class Download
{
    /** @var Product */
    private $product;
    /** @var Settings */
    private $settings;
    /** @var Client */
    private $client;
    /** @var License */
    private $license;
    /** @var Signatures */
    private $signatures;
    /** @var UpdateCheck */
    private $updates;

    public function __construct(Product $product, Settings $settings, Client $client, License $license, Signatures $signatures, UpdateCheck $updates)
    {
        $this->product = $product;
        $this->settings = $settings;
        $this->client = $client;
        $this->license = $license;
        $this->signatures = $signatures;
        $this->updates = $updates;
    }

    /**
     * upgrader_pre_download: for this product's package marker, asks the package route for a fresh
     * single-use URL now and lets WordPress's own download_url() fetch it, checking Content-MD5 and,
     * for a signed release, the Ed25519 signature against the store's keys with no soft failure.
     * The URL is never shown, stored or logged.
     */
    public function filter_pre_download($reply, $package = '', $upgrader = null, $hook_extra = [])
    {
        if ($reply !== false || $package !== $this->updates->package_marker()) {
            return $reply;
        }
        $failed = is_object($upgrader) && isset($upgrader->strings['download_failed'])
            ? $upgrader->strings['download_failed'] : __('Download failed.', 'tollgate-updater');
        if ($this->settings->backed_off($this->settings->all(), time())) {
            return self::error('rate_limited', $failed, Messages::text('rate_limited'));
        }
        $answer = $this->client->post('/software/package', [
            'slug' => $this->product->slug,
            'purpose' => 'update',
            'current_version' => $this->product->installed_version(),
        ] + $this->license->identity());
        if ($answer['status'] !== 200 || empty($answer['body']['success'])) {
            if ($answer['status'] === 429) {
                $this->settings->note_rate_limit($answer, time());
            }
            $code = Client::code($answer);
            return self::error($code, $failed, $this->product->refusal($code, $answer)['message']);
        }
        $body = $answer['body'];
        if (!empty($body['manual_download_only']) || !is_string($body['download_url'] ?? null)) {
            return self::error('manual_download_only', $failed, Messages::text('manual_download_only'));
        }
        $signed = is_string($body['signature'] ?? null) && $body['signature'] !== '';
        $keys = [];
        if ($signed) {
            $keys = $this->signatures->keys_for($body['signing_key_id'] ?? null);
            if (!$keys) {
                return self::error('signature_unavailable', $failed, Messages::text('signature_unavailable'));
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
            if ($file->get_error_data('softfail-filename')) {
                @unlink($file->get_error_data('softfail-filename'));
            }
            $refusal = self::refusal_of($file);
            if ($refusal !== null) {
                return self::error($refusal['code'], $failed, $refusal['message']);
            }
            return self::error((string) $file->get_error_code(), $failed, wp_strip_all_tags($file->get_error_message()));
        }
        $sha256 = $body['file_sha256'] ?? null;
        if (is_string($sha256) && !hash_equals(strtolower($sha256), (string) hash_file('sha256', $file))) {
            @unlink($file);
            return self::error('checksum_mismatch', $failed, Messages::text('checksum_mismatch'));
        }
        return $file;
    }

    /**
     * The store's refusal behind download_url()'s `http_404` (its code for any status but 200,
     * with the status's reason phrase as the message): the route's JSON answer is in the error's
     * data (the first KB of the body), and its `code` and `message` are what the admin should see
     * (`500 artifact_integrity_failed`, `403 token_expired`…).
     *
     * @return array{code:string, message:string}|null
     */
    private static function refusal_of(\WP_Error $error): ?array
    {
        $data = $error->get_error_data();
        if ($error->get_error_code() !== 'http_404' || !is_array($data) || !is_string($data['body'] ?? null)) {
            return null;
        }
        $body = json_decode($data['body'], true);
        if (!is_array($body) || !is_string($body['code'] ?? null) || !preg_match('/^[a-z][a-z0-9_]{0,63}$/', $body['code'])) {
            return null;
        }
        $message = isset($body['message']) && is_string($body['message']) ? wp_strip_all_tags($body['message']) : null;
        return ['code' => $body['code'], 'message' => Messages::of($body['code'], $message)];
    }

    /**
     * A failed download as the upgrader shows it: WordPress's "Download failed." and the reason,
     * printed once by the upgrader's skin (the reason is its data), under the reason's own code
     * (the store's code, or WordPress's `md5_mismatch`, `signature_verification_failed`…).
     */
    private static function error(string $code, string $failed, string $reason): \WP_Error
    {
        return new \WP_Error($code !== '' ? $code : 'download_failed', $failed, $reason);
    }

    /** The store the vendor named may be on a private address (WordPress's safe requests refuse those). */
    public function filter_host_is_external($external, $host = '')
    {
        return strtolower((string) $host) === $this->product->store_host ? true : $external;
    }

    /** …and on a port of its own. */
    public function filter_safe_ports($ports, $host = '')
    {
        $port = (int) wp_parse_url($this->product->store_url, PHP_URL_PORT);
        if ($port && strtolower((string) $host) === $this->product->store_host) {
            $ports = (array) $ports;
            $ports[] = $port;
        }
        return $ports;
    }
}
