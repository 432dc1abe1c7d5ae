<?php

namespace Tollgate;

/**
 * Offline receipts (docs/licensing.md, 'Offline receipts'): proof of a valid license the site
 * checks itself while the store cannot be reached.
 */
final class Receipt
{
    /**
     * The receipt's claims when its signature verifies with one of `$keys` (the store's
     * `{id, public_key}` list), it names this site and it has not run out at `$now`; else null.
     *
     * @param array<string,mixed> $receipt
     * @param array<int,array<string,mixed>> $keys
     */
    public static function check(array $receipt, array $keys, string $installation_id, string $domain, int $now): ?array
    {
        if (!function_exists('sodium_crypto_sign_verify_detached')) {
            return null;
        }
        foreach (['payload', 'signature', 'signing_key_id'] as $field) {
            if (!isset($receipt[$field]) || !is_string($receipt[$field])) {
                return null;
            }
        }
        foreach ($keys as $key) {
            if (!is_array($key) || ($key['id'] ?? null) !== $receipt['signing_key_id']) {
                continue;
            }
            $signature = base64_decode($receipt['signature'], true);
            $public = base64_decode((string) ($key['public_key'] ?? ''), true);
            if ($signature === false || $public === false
                || strlen($signature) !== SODIUM_CRYPTO_SIGN_BYTES
                || strlen($public) !== SODIUM_CRYPTO_SIGN_PUBLICKEYBYTES) {
                return null;
            }
            try {
                $verified = sodium_crypto_sign_verify_detached($signature, $receipt['payload'], $public);
            } catch (\Throwable $e) {
                // WordPress's sodium_compat (a site without ext-sodium) throws on a malformed
                // signature where the extension answers false: a forged receipt is not a fatal error.
                $verified = false;
            }
            if (!$verified) {
                return null;
            }
            $json = base64_decode(strtr($receipt['payload'], '-_', '+/'), true);
            $claims = is_string($json) ? json_decode($json, true) : null;
            if (!is_array($claims)
                || ($claims['installation_id'] ?? null) !== $installation_id
                || ($claims['domain'] ?? null) !== $domain) {
                return null;
            }
            $issued = strtotime((string) ($claims['issued_at'] ?? ''));
            $until = strtotime((string) ($claims['valid_until'] ?? ''));
            // A receipt from the future means this site's clock (or the receipt) is not to be trusted.
            if ($issued === false || $until === false || $issued > $now + 86400 || $now >= $until) {
                return null;
            }
            if (!empty($claims['usage_expires_at'])) {
                $usage = strtotime($claims['usage_expires_at'] . ' UTC');
                if ($usage !== false && $now >= $usage) {
                    return null;
                }
            }
            return $claims;
        }
        return null;
    }
}
