<?php

namespace Tollgate;

/**
 * A sentence for the site's administrator for every code the store's activate, validate, check
 * and package answers carry (docs/distribution.md section 8, docs/licensing.md section 6). The
 * store's own `message` is preferred when its answer has one; these are the fallback, and the
 * words for the updater's own conditions (`store_unreachable`, `signature_unavailable`).
 */
final class Messages
{
    /** Codes after which buying or renewing helps: the renewal link is shown with them. */
    const RENEWABLE = [
        'expired', 'trial_ended', 'subscription_inactive', 'release_not_entitled', 'no_eligible_release',
        'license_inactive', 'activation_limit_reached', 'staging_activation_limit_reached',
        'license_required',
    ];

    public static function text(string $code): string
    {
        switch ($code) {
            case 'license_required':
                return __('A license key is needed to receive updates.', 'tollgate-updater');
            case 'missing_key':
                return __('Enter your license key.', 'tollgate-updater');
            case 'invalid_license':
                return __('This license key is not known to the store. Check it for typing errors.', 'tollgate-updater');
            case 'license_product_mismatch':
                return __('This license key is for another product.', 'tollgate-updater');
            case 'revoked':
                return __('This license has been revoked. Contact the store.', 'tollgate-updater');
            case 'expired':
                return __('Your license has expired. Renew it to receive updates.', 'tollgate-updater');
            case 'trial_ended':
                return __('Your trial has ended. Buy a license to keep receiving updates.', 'tollgate-updater');
            case 'subscription_inactive':
                return __('The subscription behind this license is not active. Renew it to receive updates.', 'tollgate-updater');
            case 'license_inactive':
                return __('This license is not active.', 'tollgate-updater');
            case 'invalid_usage_expiry':
                return __('The store cannot read this license\'s expiry date. Contact the store.', 'tollgate-updater');
            case 'domain_not_activated':
                return __('This site is not activated for the license. Save the license key again to activate it.', 'tollgate-updater');
            case 'activation_limit_reached':
                return __('This license is active on as many sites as it allows. Deactivate it on another site, or upgrade the license.', 'tollgate-updater');
            case 'staging_activation_limit_reached':
                return __('This license is active on as many staging sites as it allows. Deactivate one first.', 'tollgate-updater');
            case 'oauth_required':
                return __('The store asks for this activation to be approved in your account there. Save the key again to go to the approval page.', 'tollgate-updater');
            case 'access_denied':
                return __('The activation was denied at the store. Nothing was activated.', 'tollgate-updater');
            case 'invalid_state':
            case 'approval_expired':
                return __('The approval at the store has expired or was already used. Save the key again to ask for a new one.', 'tollgate-updater');
            case 'oauth_unavailable':
            case 'missing_return_url':
            case 'invalid_return_url':
                return __('The store could not start the approval of this activation. Contact the store.', 'tollgate-updater');
            case 'no_activation':
                return __('This site was not activated for the license.', 'tollgate-updater');
            case 'release_not_entitled':
            case 'no_eligible_release':
                return __('Your license does not cover this update. Renew it to receive it.', 'tollgate-updater');
            case 'rate_limited':
                return __('The store is busy with requests from this license. The updater will ask again later.', 'tollgate-updater');
            case 'module_disabled':
            case 'licensing_unavailable':
            case 'store_unreachable':
            case 'server_busy':
                return __('The store cannot be reached right now. The updater keeps the last answer it had and asks again later.', 'tollgate-updater');
            case 'product_not_found':
            case 'software_slug_ambiguous':
            case 'software_disabled':
            case 'software_product_unavailable':
                return __('The store does not offer updates for this product right now. Contact the store.', 'tollgate-updater');
            case 'token_expired':
            case 'token_consumed':
            case 'token_invalidated':
            case 'invalid_token':
            case 'token_binding_required':
            case 'activation_inactive':
            case 'activation_binding_changed':
            case 'release_binding_changed':
            case 'license_policy_changed':
            case 'release_withdrawn':
            case 'release_not_published':
                return __('The download was refused because something changed at the store. Try the update again.', 'tollgate-updater');
            case 'artifact_not_found':
            case 'artifact_integrity_failed':
            case 'artifact_integrity_missing':
            case 'artifact_changed':
            case 'artifact_not_available':
            case 'token_write_failed':
            case 'token_generation_failed':
                return __('The store cannot deliver this update right now. Try again later.', 'tollgate-updater');
            case 'updater_external_link_prohibited':
            case 'manual_download_only':
                return __('This update is downloaded by hand from your account at the store.', 'tollgate-updater');
            case 'signature_unavailable':
                return __('The store\'s signing keys could not be read, so the update\'s signature cannot be checked. Try again later.', 'tollgate-updater');
            case 'checksum_mismatch':
                return __('The downloaded update does not match the store\'s checksum and was discarded.', 'tollgate-updater');
            case 'missing_params':
            case 'unsupported_parameter':
            case 'invalid_purpose':
            case 'current_version_required':
            case 'current_version_not_allowed':
            case 'missing_identity':
            case 'invalid_identity':
            case 'missing_slug':
            case 'invalid_parameters':
            case 'rest_invalid_param':
            case 'rest_invalid_json':
            case 'missing_identifier':
                return __('The store refused the updater\'s request. Tell the plugin\'s author.', 'tollgate-updater');
            case 'activation_transaction_failed':
            case 'activation_read_failed':
            case 'activation_write_failed':
            case 'activation_commit_failed':
            case 'deactivation_transaction_failed':
            case 'deactivation_read_failed':
            case 'deactivation_write_failed':
            case 'deactivation_commit_failed':
            case 'signing_key_unavailable':
            case 'internal_error':
                return __('The store had a problem answering. Try again later.', 'tollgate-updater');
            default:
                return __('The store refused the request.', 'tollgate-updater');
        }
    }

    /**
     * The message of a refusal: the store's own `message` when it sends one with a renewal link or
     * for an eligibility answer, else the text above. `$answer_message` is untrusted text (escape
     * it on output).
     */
    public static function of(string $code, ?string $answer_message): string
    {
        if (is_string($answer_message) && trim($answer_message) !== '' && trim($answer_message) !== '…') {
            return $answer_message;
        }
        return self::text($code);
    }

    /**
     * The message of a refusal that names a version which exists (`available_version`): the
     * store's own message already says so ("Version 1.1.0 is available. …") and is shown as it is;
     * the SDK's fallback sentence is led by the version.
     */
    public static function with_version(string $code, ?string $answer_message, ?string $version): string
    {
        $message = self::of($code, $answer_message);
        if ($version === null || $version === '' || $message === $answer_message) {
            return $message;
        }
        /* translators: 1: a version number, 2: why it cannot be installed */
        return sprintf(__('Version %1$s is available. %2$s', 'tollgate-updater'), $version, $message);
    }

    /** While the store asks for a pause (429): how long until the updater asks again. */
    public static function busy(int $seconds): string
    {
        $minutes = max(1, (int) ceil($seconds / 60));
        return sprintf(
            /* translators: %d: minutes until the store is asked again */
            _n(
                'The store is busy. The updater will ask again in %d minute.',
                'The store is busy. The updater will ask again in %d minutes.',
                $minutes,
                'tollgate-updater'
            ),
            $minutes
        );
    }

    /** A changelog point's type as a heading word: the usual ones translated, others as sent. */
    public static function point_type(string $type): string
    {
        switch ($type) {
            case 'added':
                return __('Added', 'tollgate-updater');
            case 'changed':
                return __('Changed', 'tollgate-updater');
            case 'deprecated':
                return __('Deprecated', 'tollgate-updater');
            case 'removed':
                return __('Removed', 'tollgate-updater');
            case 'fixed':
                return __('Fixed', 'tollgate-updater');
            case 'security':
                return __('Security', 'tollgate-updater');
            default:
                return ucfirst($type);
        }
    }

    public static function renewable(string $code): bool
    {
        return in_array($code, self::RENEWABLE, true);
    }
}
