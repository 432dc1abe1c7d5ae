<?php

namespace Tollgate;

/**
 * The license of this site: activation and deactivation (docs/licensing.md sections 2 and 4),
 * validation with its offline receipt (docs/licensing.md, 'Offline receipts').
 */
final class License
{
    /** How long a license validation is used before the store is asked again. */
    const VALIDATE_TTL = 43200;

    /** @var Product */
    private $product;
    /** @var Settings */
    private $settings;
    /** @var Client */
    private $client;
    /** @var Signatures */
    private $signatures;

    public function __construct(Product $product, Settings $settings, Client $client, Signatures $signatures)
    {
        $this->product = $product;
        $this->settings = $settings;
        $this->client = $client;
        $this->signatures = $signatures;
    }

    /** The license fields of the update check and the package request, when a key is kept. */
    public function identity(): array
    {
        $key = $this->settings->license_key();
        if (!$this->product->licensed() || $key === '') {
            return [];
        }
        return [
            'license_key' => $key,
            'site_url' => $this->product->site_url(),
            'installation_id' => $this->settings->installation_id(),
        ];
    }

    /**
     * Activates this site with `$key`. On success the key is kept; a refusal keeps nothing and
     * answers the code and message to show. In a store that asks for the customer's approval
     * (docs/oauth.md) the answer is `oauth_required` with the store's `redirect_url`, to which the
     * administrator is sent; `$return_url` is where the store sends them back, and the approval's
     * `$activation_token` then finishes the activation.
     *
     * @return array{ok:bool, code?:string, message?:string, renewal_url?:string, redirect_url?:string}
     */
    public function activate(string $key, string $return_url = '', string $activation_token = ''): array
    {
        $request = [
            'license_key' => $key,
            'domain' => $this->product->site_url(),
            'installation_id' => $this->settings->installation_id(),
        ];
        if ($return_url !== '') {
            $request['return_url'] = $return_url;
        }
        if ($activation_token !== '') {
            $request['activation_token'] = $activation_token;
        }
        $answer = $this->client->post('/licenses/activate', $request);
        if ($answer['status'] === 200 && ($answer['body']['code'] ?? null) === 'oauth_required'
            && is_string($answer['body']['redirect_url'] ?? null) && preg_match('#^https?://#i', $answer['body']['redirect_url'])) {
            return ['ok' => false, 'code' => 'oauth_required', 'message' => Messages::text('oauth_required'), 'renewal_url' => '', 'redirect_url' => $answer['body']['redirect_url']];
        }
        if ($answer['status'] === 200 && !empty($answer['body']['success'])) {
            $this->settings->update([
                'license_key' => $key,
                'activation_id' => (int) ($answer['body']['activation_id'] ?? 0),
                'check' => null,
                'check_error' => null,
                'validation' => null,
                'next_check_at' => 0,
            ]);
            delete_site_transient($this->product->type === 'theme' ? 'update_themes' : 'update_plugins');
            return ['ok' => true];
        }
        if ($answer['status'] === 429) {
            $this->settings->note_rate_limit($answer, time());
        }
        $code = $answer['status'] === 200 ? (string) ($answer['body']['code'] ?? 'unknown') : Client::code($answer);
        return $this->product->refusal($code, $answer);
    }

    /**
     * A store that moved to Tollgate from another (docs/migrating.md, 'Leaving the compatibility
     * API'): while this copy holds no key, the key the old updater kept in the WordPress option
     * `legacy_key_option` activates this site, and the store gives the URL-only activation the site
     * had its full identity in place (same seat, no customer action). The option is removed once the
     * store has answered, yes or no, so that a key the owner removes later is not taken again; while
     * the store cannot be reached or asks to slow down, it stays for the next check.
     */
    public function adopt_legacy_key(): void
    {
        $option = (string) $this->product->options['legacy_key_option'];
        if ($option === '' || $this->settings->license_key() !== '') {
            return;
        }
        $key = get_option($option);
        if (!is_string($key) || trim($key) === '') {
            return;
        }
        $result = $this->activate(trim($key));
        if ($result['ok'] || !in_array($result['code'] ?? '', ['store_unreachable', 'rate_limited'], true)) {
            delete_option($option);
        }
    }

    /** Gives this site's seat back; the key stays for a later reactivation. */
    public function deactivate(): void
    {
        $key = $this->settings->license_key();
        $activation = (int) $this->settings->get('activation_id');
        if ($key === '' || $activation === 0) {
            return;
        }
        $answer = $this->client->post('/licenses/deactivate', [
            'license_key' => $key,
            'activation_id' => $activation,
        ], 10);
        if ($answer['status'] === 200 || in_array(Client::code($answer), ['no_activation', 'invalid_license'], true)) {
            $this->settings->update(['activation_id' => 0, 'validation' => null]);
        }
    }

    /** Gives the seat back and forgets the key and what came with it. */
    public function remove(): void
    {
        $this->deactivate();
        $this->settings->update(['license_key' => '', 'activation_id' => 0, 'check' => null, 'check_error' => null, 'validation' => null, 'receipt' => null]);
    }

    /** Activates again with the kept key (plugin activated, theme switched to). */
    public function reactivate(): void
    {
        $key = $this->settings->license_key();
        if ($key !== '' && empty($this->settings->get('activation_id'))) {
            $this->activate($key);
        }
    }

    /**
     * Whether this site holds a valid license: the store's answer of the last 12 hours, or through
     * an outage the offline receipt while it lasts.
     *
     * @return array{valid:bool, code:string, message:string, renewal_url:string, offline:bool}
     */
    public function status(): array
    {
        $key = $this->settings->license_key();
        if ($key === '') {
            return $this->status_of(false, 'missing_key', null, null, false);
        }
        $state = $this->settings->all();
        $now = time();
        $cached = $state['validation'] ?? null;
        if (is_array($cached) && $now - (int) ($cached['at'] ?? 0) < self::VALIDATE_TTL) {
            return $cached['status'];
        }
        if ($this->settings->backed_off($state, $now)) {
            return $this->offline_status($state);
        }
        $request = [
            'license_key' => $key,
            'domain' => $this->product->site_url(),
            'installation_id' => $this->settings->installation_id(),
            'receipt' => true,
        ];
        $answer = $this->client->post('/licenses/validate', $request + $this->product->reported_version() + $this->product->platform_fields());
        if ($answer['status'] === 400 && Client::code($answer) === 'invalid_parameters') {
            // A store older than the field report refuses its fields: ask again without them.
            $answer = $this->client->post('/licenses/validate', $request);
        }
        if ($answer['status'] === 429) {
            $this->settings->note_rate_limit($answer, $now);
            return $this->offline_status($state);
        }
        if (Client::is_outage($answer)) {
            return $this->offline_status($state);
        }
        $body = $answer['body'];
        $valid = $answer['status'] === 200 && ($body['valid'] ?? false) === true && ($body['effective_status'] ?? '') === 'valid';
        $code = $valid ? 'valid' : Client::code($answer);
        $status = $this->status_of($valid, $code, $body['message'] ?? null, $body['renewal_url'] ?? null, false);
        $changes = ['validation' => ['at' => $now, 'status' => $status]];
        if ($valid && isset($body['receipt']) && is_array($body['receipt'])) {
            $changes['receipt'] = $body['receipt'];
        } elseif (!$valid) {
            $changes['receipt'] = null;
        }
        $this->settings->update($changes);
        if (isset($changes['receipt']['signing_key_id'])) {
            // The keys are kept with the receipt: an outage is exactly when they cannot be fetched.
            $this->signatures->keys(!Signatures::has_key($this->signatures->keys(false), $changes['receipt']['signing_key_id']));
        }
        return $status;
    }

    private function offline_status(array $state): array
    {
        $receipt = $state['receipt'] ?? null;
        if (is_array($receipt)) {
            $claims = Receipt::check($receipt, $this->signatures->keys(false), $this->settings->installation_id(), $this->product->normalised_domain(), time());
            if ($claims !== null) {
                return $this->status_of(true, 'valid', null, null, true);
            }
        }
        return $this->status_of(false, 'store_unreachable', null, null, true);
    }

    private function status_of(bool $valid, string $code, $message, $renewal, bool $offline): array
    {
        return [
            'valid' => $valid,
            'code' => $code,
            'message' => $valid ? '' : Messages::of($code, is_string($message) ? $message : null),
            'renewal_url' => $this->product->renewal_url($code, $renewal),
            'offline' => $offline,
        ];
    }
}
