<?php

namespace Tollgate;

/**
 * The license screen (Settings for a plugin, Appearance for a theme), its save action, and what
 * the plugins, themes and updates screens say about the license.
 */
final class LicenseScreen
{
    /** The license screen offers the renewal from this many days before the license ends. */
    const RENEW_WITHIN_DAYS = 30;

    /** @var Product */
    private $product;
    /** @var Settings */
    private $settings;
    /** @var License */
    private $license;
    /** @var Cache */
    private $cache;

    public function __construct(Product $product, Settings $settings, License $license, Cache $cache)
    {
        $this->product = $product;
        $this->settings = $settings;
        $this->license = $license;
        $this->cache = $cache;
    }

    /** The admin-post action of the screen's form. */
    public function action(): string
    {
        return 'tollgate_license_' . $this->product->slug;
    }

    private function page(): string
    {
        return 'tollgate-' . $this->product->slug;
    }

    public function page_url(): string
    {
        if ($this->product->network) {
            return network_admin_url('settings.php?page=' . $this->page());
        }
        return $this->product->type === 'theme'
            ? admin_url('themes.php?page=' . $this->page())
            : admin_url('options-general.php?page=' . $this->page());
    }

    private function title(): string
    {
        /* translators: %s: the plugin's or theme's name */
        return sprintf(__('%s license', 'tollgate-updater'), $this->product->name());
    }

    public function admin_menu(): void
    {
        $title = $this->title();
        if ($this->product->network) {
            add_submenu_page('settings.php', $title, $title, $this->product->capability(), $this->page(), [$this, 'render']);
        } elseif ($this->product->type === 'theme') {
            add_theme_page($title, $title, $this->product->capability(), $this->page(), [$this, 'render']);
        } else {
            add_options_page($title, $title, $this->product->capability(), $this->page(), [$this, 'render']);
        }
    }

    public function action_links($links)
    {
        $links = (array) $links;
        if ($this->product->licensed() && current_user_can($this->product->capability())) {
            $links[] = '<a href="' . esc_url($this->page_url()) . '">' . esc_html__('License', 'tollgate-updater') . '</a>';
        }
        return $links;
    }

    /** The key as shown back: its last four characters only. */
    private function masked_key(): string
    {
        $key = $this->settings->license_key();
        return $key === '' ? '' : str_repeat('•', 8) . substr($key, -4);
    }

    public function render(): void
    {
        if (!current_user_can($this->product->capability())) {
            wp_die(esc_html__('Sorry, you are not allowed to manage this license.', 'tollgate-updater'), 403);
        }
        $masked = $this->masked_key();
        echo '<div class="wrap"><h1>' . esc_html($this->title()) . '</h1>';
        $notice = $this->cache->take_flash();
        if ($notice !== null) {
            self::print_notice(!empty($notice['ok']) ? 'success' : 'error', (string) $notice['message'], (string) ($notice['renewal_url'] ?? ''), (string) ($notice['code'] ?? ''));
        }
        $renewal = $this->renewal();
        if ($renewal !== null) {
            $when = $renewal['ends'] === null ? '' : wp_date(get_option('date_format'), $renewal['ends']);
            $text = $renewal['code'] === 'expired'
                ? ($when === ''
                    ? __('This license has expired.', 'tollgate-updater')
                    /* translators: %s: the date the license ended */
                    : sprintf(__('This license ended on %s.', 'tollgate-updater'), $when))
                /* translators: %s: the date the license ends */
                : sprintf(__('This license ends on %s.', 'tollgate-updater'), $when);
            printf(
                '<div class="notice notice-warning inline tollgate-renewal" data-tollgate-code="%s"><p>%s <a class="button" href="%s" target="_blank" rel="noopener noreferrer">%s</a></p></div>',
                esc_attr($renewal['code']),
                esc_html($text),
                esc_url($renewal['url']),
                esc_html__('Renew', 'tollgate-updater')
            );
        }
        // The network admin has no admin-post.php: its forms post to edit.php?action=….
        $target = $this->product->network ? network_admin_url('edit.php?action=' . $this->action()) : admin_url('admin-post.php');
        echo '<form method="post" action="' . esc_url($target) . '">';
        echo '<input type="hidden" name="action" value="' . esc_attr($this->action()) . '">';
        wp_nonce_field($this->action());
        echo '<table class="form-table" role="presentation"><tr><th scope="row"><label for="tollgate-key">'
            . esc_html__('License key', 'tollgate-updater') . '</label></th><td>';
        echo '<input type="text" class="regular-text" id="tollgate-key" name="tollgate_license_key" value="" autocomplete="off" spellcheck="false" maxlength="255" placeholder="' . esc_attr($masked) . '">';
        if ($masked !== '') {
            /* translators: %s: the license key's last four characters after eight dots */
            echo '<p class="description">' . esc_html(sprintf(__('Saved key: %s', 'tollgate-updater'), $masked)) . '</p>';
        }
        echo '</td></tr></table>';
        submit_button(__('Save and activate', 'tollgate-updater'), 'primary', 'tollgate_save', false);
        if ($masked !== '') {
            echo ' ';
            submit_button(__('Deactivate and remove the key', 'tollgate-updater'), 'secondary', 'tollgate_remove', false);
        }
        echo '</form>';
        $upgrade = $this->product->upgrade_url();
        if ($masked !== '' && $upgrade !== '') {
            echo '<p>' . esc_html__('Need more sites or another plan?', 'tollgate-updater') . ' <a href="' . esc_url($upgrade)
                . '" target="_blank" rel="noopener noreferrer">' . esc_html__('Upgrade or downgrade your license', 'tollgate-updater') . '</a></p>';
        }
        echo '</div>';
    }

    /** admin-post: saves the key and activates this site with it (nonce and capability checked). */
    public function save(): void
    {
        if (!current_user_can($this->product->capability())) {
            wp_die(esc_html__('Sorry, you are not allowed to manage this license.', 'tollgate-updater'), 403);
        }
        check_admin_referer($this->action());
        if (isset($_POST['tollgate_remove'])) {
            $this->license->remove();
            $this->cache->flash(['ok' => true, 'message' => __('The license key was removed and this site deactivated.', 'tollgate-updater')]);
        } else {
            $raw = isset($_POST['tollgate_license_key']) && is_string($_POST['tollgate_license_key'])
                ? wp_unslash($_POST['tollgate_license_key']) : '';
            $key = trim(sanitize_text_field($raw));
            if ($key === '' || strlen($key) > 255) {
                $this->cache->flash(['ok' => false, 'message' => Messages::text('missing_key')]);
            } else {
                $result = $this->license->activate($key, $this->page_url());
                if (($result['code'] ?? '') === 'oauth_required' && isset($result['redirect_url'])) {
                    $this->await_approval($result['redirect_url']);
                }
                $this->cache->flash($result['ok']
                    ? ['ok' => true, 'message' => __('The license is active on this site.', 'tollgate-updater')]
                    : ['ok' => false, 'code' => $result['code'] ?? '', 'message' => $result['message'], 'renewal_url' => $result['renewal_url']]);
            }
        }
        wp_safe_redirect($this->page_url());
        exit;
    }

    /**
     * Approval mode (docs/oauth.md): remembers the request's `state` and `nonce` for this
     * administrator (10 minutes, the state's own lifetime) and sends the browser to the store's
     * approval page, its address unmodified.
     */
    private function await_approval(string $redirect_url): void
    {
        parse_str((string) wp_parse_url($redirect_url, PHP_URL_QUERY), $query);
        $this->cache->keep_approval([
            'state' => is_string($query['state'] ?? null) ? $query['state'] : '',
            'nonce' => is_string($query['nonce'] ?? null) ? $query['nonce'] : '',
        ]);
        // The store is another host: wp_safe_redirect() would refuse it.
        wp_redirect($redirect_url);
        exit;
    }

    /**
     * admin_init: the store sends the administrator back to the license screen with the approval's
     * `activation_token` and `license_key` (or `error=access_denied`), and its `state` or `nonce`.
     * A callback that does not carry the state or nonce this administrator was sent with is
     * ignored (it could plant someone else's license); one that does finishes the activation with
     * the token, then the screen is shown again without the token in its address.
     */
    public function approval_callback(): void
    {
        if (($_GET['page'] ?? '') !== $this->page() || (!isset($_GET['state']) && !isset($_GET['nonce']))
            || !current_user_can($this->product->capability())) {
            return;
        }
        $pending = $this->cache->take_approval();
        $state = is_string($_GET['state'] ?? null) ? wp_unslash($_GET['state']) : '';
        $nonce = is_string($_GET['nonce'] ?? null) ? wp_unslash($_GET['nonce']) : '';
        $ours = $pending !== null && (
            ($state !== '' && $pending['state'] !== '' && hash_equals($pending['state'], $state))
            || ($nonce !== '' && $pending['nonce'] !== '' && hash_equals($pending['nonce'], $nonce))
        );
        $token = is_string($_GET['activation_token'] ?? null) ? sanitize_text_field(wp_unslash($_GET['activation_token'])) : '';
        $key = is_string($_GET['license_key'] ?? null) ? trim(sanitize_text_field(wp_unslash($_GET['license_key']))) : '';
        if (!$ours) {
            $this->cache->flash(['ok' => false, 'code' => 'approval_expired', 'message' => Messages::text('approval_expired')]);
        } elseif (($_GET['error'] ?? '') === 'access_denied') {
            $this->cache->flash(['ok' => false, 'code' => 'access_denied', 'message' => Messages::text('access_denied')]);
        } elseif ($token === '' || $key === '' || strlen($key) > 255) {
            $this->cache->flash(['ok' => false, 'code' => 'approval_expired', 'message' => Messages::text('approval_expired')]);
        } else {
            $result = $this->license->activate($key, '', $token);
            $code = (string) ($result['code'] ?? '');
            if (in_array($code, ['invalid_token', 'token_consumed'], true)) {
                $result['message'] = Messages::text('approval_expired');
            }
            $this->cache->flash($result['ok']
                ? ['ok' => true, 'code' => 'activated', 'message' => __('The license is active on this site.', 'tollgate-updater')]
                : ['ok' => false, 'code' => $code, 'message' => $result['message'], 'renewal_url' => $result['renewal_url']]);
        }
        wp_safe_redirect($this->page_url());
        exit;
    }

    /**
     * The renewal the license screen offers, from what the store last said (no request of its
     * own): when the license has expired (the update check's or validation's `expired`) or ends
     * within RENEW_WITHIN_DAYS (the update answer's `entitlement.usage_expires_at`). Where: the
     * store's `renewal_url` (for a term license, its one-click renewal link), else the vendor's
     * `renewal_url` option; null when there is nowhere to send the administrator.
     *
     * @return array{code:string, ends:?int, url:string}|null
     */
    public function renewal(): ?array
    {
        if (!$this->product->licensed() || $this->settings->license_key() === '') {
            return null;
        }
        $state = $this->settings->all();
        $error = $state['check_error'] ?? null;
        $validation = $state['validation']['status'] ?? null;
        if ((is_array($error) && ($error['code'] ?? '') === 'expired')
            || (is_array($validation) && ($validation['code'] ?? '') === 'expired')) {
            $url = $this->product->renewal_url('expired', is_array($error) ? ($error['renewal_url'] ?? null) : null);
            return $url === '' ? null : ['code' => 'expired', 'ends' => null, 'url' => $url];
        }
        $answer = $state['check']['answer'] ?? null;
        $end = is_array($answer) ? ($answer['entitlement']['usage_expires_at'] ?? null) : null;
        $ends = is_string($end) && $end !== '' ? strtotime($end) : false;
        if ($ends === false || $ends - time() > self::RENEW_WITHIN_DAYS * DAY_IN_SECONDS) {
            return null;
        }
        $url = $this->product->renewal_url('expired', $answer['renewal_url'] ?? null);
        return $url === '' ? null : ['code' => $ends <= time() ? 'expired' : 'renewal_due', 'ends' => $ends, 'url' => $url];
    }

    /** What the site's administrator should know about this license now, or null when all is well. */
    public function notice(): ?array
    {
        if (!$this->product->licensed()) {
            return null;
        }
        if ($this->settings->license_key() === '') {
            return ['code' => 'missing_key', 'message' => Messages::text('missing_key'), 'renewal_url' => '', 'link' => $this->page_url()];
        }
        $state = $this->settings->all();
        $error = $state['check_error'] ?? null;
        if (is_array($error)) {
            return ['code' => (string) ($error['code'] ?? ''), 'message' => (string) $error['message'], 'renewal_url' => (string) $error['renewal_url'], 'link' => $this->page_url()];
        }
        $answer = $state['check']['answer'] ?? null;
        if (is_array($answer) && empty($answer['eligible']) && !empty($answer['available']) && is_string($answer['available_version'] ?? null)) {
            $code = (string) ($answer['eligibility_reason'] ?? 'release_not_entitled');
            $message = Messages::with_version($code, isset($answer['message']) && is_string($answer['message']) ? $answer['message'] : null, $answer['available_version']);
            return ['code' => $code, 'message' => $message, 'renewal_url' => $this->product->renewal_url($code, $answer['renewal_url'] ?? null), 'link' => $this->page_url()];
        }
        if ($this->settings->backed_off($state, time())) {
            // The store asked for a pause (429): said, so that "up to date" is not taken for the store's word.
            return ['code' => 'rate_limited', 'message' => Messages::busy((int) $state['backoff_until'] - time()), 'renewal_url' => '', 'link' => $this->page_url()];
        }
        return null;
    }

    private static function print_notice(string $kind, string $message, string $renewal, string $code = ''): void
    {
        $text = esc_html($message);
        if ($renewal !== '') {
            $text .= ' <a href="' . esc_url($renewal) . '" target="_blank" rel="noopener noreferrer">' . esc_html__('Renew your license', 'tollgate-updater') . '</a>';
        }
        printf('<div class="notice notice-%s" data-tollgate-code="%s"><p>%s</p></div>', esc_attr($kind), esc_attr($code), $text);
    }

    /** after_plugin_row: the license's state under the plugin on the plugins screen. */
    public function plugin_row(): void
    {
        $notice = $this->notice();
        if ($notice === null || !current_user_can($this->product->capability())) {
            return;
        }
        $text = esc_html($notice['message']);
        if ($notice['renewal_url'] !== '') {
            $text .= ' <a href="' . esc_url($notice['renewal_url']) . '" target="_blank" rel="noopener noreferrer">' . esc_html__('Renew your license', 'tollgate-updater') . '</a>';
        }
        $text .= ' <a href="' . esc_url($notice['link']) . '">' . esc_html__('License settings', 'tollgate-updater') . '</a>';
        echo '<tr class="plugin-update-tr active tollgate-license-row"><td colspan="4" class="plugin-update colspanchange">'
            . '<div class="update-message notice inline notice-warning notice-alt" data-tollgate-code="' . esc_attr($notice['code']) . '"><p>' . $text . '</p></div></td></tr>';
    }

    /** admin_notices: for a theme on the themes and updates screens; for a plugin on the updates screen. */
    public function admin_notices(): void
    {
        $screen = function_exists('get_current_screen') ? get_current_screen() : null;
        $id = $screen ? (string) $screen->id : '';
        $here = $this->product->type === 'theme' ? in_array($id, ['themes', 'update-core'], true) : in_array($id, ['update-core', 'update-core-network'], true);
        if (!$here || !current_user_can($this->product->capability())) {
            return;
        }
        $notice = $this->notice();
        if ($notice !== null) {
            /* translators: 1: the plugin's or theme's name, 2: what the administrator should know */
            self::print_notice('warning', sprintf(__('%1$s: %2$s', 'tollgate-updater'), $this->product->name(), $notice['message']), $notice['renewal_url']);
        }
    }
}
