<?php

namespace Tollgate;

/**
 * The SDK's transients: the changelog feed (a site transient, kept an hour), the one-time notice
 * the license screen shows after a save (a transient per user, kept a minute), and the approval
 * an administrator was sent to in a store's approval mode (per user, ten minutes).
 */
final class Cache
{
    /** @var Product */
    private $product;

    public function __construct(Product $product)
    {
        $this->product = $product;
    }

    private function changelog_key(): string
    {
        return 'tollgate_changelog_' . md5($this->product->store_url . '|' . $this->product->slug);
    }

    /** @return array|null the kept changelog versions, or null when none is kept */
    public function changelog(): ?array
    {
        $cached = get_site_transient($this->changelog_key());
        return is_array($cached) ? $cached : null;
    }

    public function keep_changelog(array $versions): void
    {
        set_site_transient($this->changelog_key(), $versions, HOUR_IN_SECONDS);
    }

    /** Uninstall: the changelog and every user's pending notice go with the option. */
    public function forget(): void
    {
        global $wpdb;
        delete_site_transient($this->changelog_key());
        foreach (['tollgate_flash_', 'tollgate_approval_'] as $kind) {
            $prefix = $kind . $this->product->slug . '_';
            $wpdb->query($wpdb->prepare(
                "DELETE FROM {$wpdb->options} WHERE option_name LIKE %s OR option_name LIKE %s",
                $wpdb->esc_like('_transient_' . $prefix) . '%',
                $wpdb->esc_like('_transient_timeout_' . $prefix) . '%'
            ));
        }
    }

    private function approval_key(): string
    {
        return 'tollgate_approval_' . $this->product->slug . '_' . get_current_user_id();
    }

    /** The state and nonce of the approval this administrator was sent to (10 minutes). */
    public function keep_approval(array $pending): void
    {
        set_transient($this->approval_key(), $pending, 10 * MINUTE_IN_SECONDS);
    }

    /** The pending approval, once: a callback is answered a single time. */
    public function take_approval(): ?array
    {
        $pending = get_transient($this->approval_key());
        delete_transient($this->approval_key());
        return is_array($pending) && is_string($pending['state'] ?? null) && is_string($pending['nonce'] ?? null) ? $pending : null;
    }

    private function flash_key(): string
    {
        return 'tollgate_flash_' . $this->product->slug . '_' . get_current_user_id();
    }

    public function flash(array $notice): void
    {
        set_transient($this->flash_key(), $notice, 60);
    }

    /** The notice kept by flash(), once. */
    public function take_flash(): ?array
    {
        $notice = get_transient($this->flash_key());
        if (!is_array($notice)) {
            return null;
        }
        delete_transient($this->flash_key());
        return $notice;
    }
}
