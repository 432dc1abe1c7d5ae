<?php

namespace Tollgate;

/**
 * The store's release signatures as WordPress checks them: the store's public keys
 * (GET /v1/software/signing-keys, kept 12 hours), its host among the signature hosts, and no soft
 * failure for it.
 */
final class Signatures
{
    /** How long the public keys are used before they are fetched again. */
    const KEYS_TTL = 43200;

    /** @var Product */
    private $product;
    /** @var Settings */
    private $settings;
    /** @var Client */
    private $client;

    public function __construct(Product $product, Settings $settings, Client $client)
    {
        $this->product = $product;
        $this->settings = $settings;
        $this->client = $client;
    }

    /** The store's public keys, `{id, public_key}` each; `$refresh` asks the store now. */
    public function keys(bool $refresh): array
    {
        $cached = $this->settings->get('keys');
        if (!$refresh && is_array($cached) && time() - (int) ($cached['at'] ?? 0) < self::KEYS_TTL) {
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
        $this->settings->update(['keys' => ['at' => time(), 'list' => $list]]);
        return $list;
    }

    public static function has_key(array $keys, $id): bool
    {
        foreach ($keys as $key) {
            if (($key['id'] ?? null) === $id) {
                return true;
            }
        }
        return false;
    }

    /** The keys that may vouch for a release signed with `$key_id`, fetched again when it is not listed. */
    public function keys_for($key_id): array
    {
        $keys = $this->keys(false);
        return self::has_key($keys, $key_id) ? $keys : $this->keys(true);
    }

    /** wp_signature_hosts: WordPress checks signatures of downloads from the store's host. */
    public function filter_hosts($hosts)
    {
        $hosts = (array) $hosts;
        $host = $this->product->store_host;
        if ($host !== '' && !in_array($host, $hosts, true)) {
            $hosts[] = $host;
        }
        return $hosts;
    }

    /** wp_signature_softfail: a signature that does not verify is a failure for the store's host. */
    public function filter_softfail($softfail, $url = '')
    {
        return strtolower((string) wp_parse_url((string) $url, PHP_URL_HOST)) === $this->product->store_host ? false : $softfail;
    }
}
