<?php

namespace Tollgate;

/**
 * The SDK's text domain, `tollgate-updater`. The SDK is a library inside the vendor's plugin or
 * theme, not a plugin of its own, so load_plugin_textdomain() (a path under the plugins folder)
 * does not fit: load_textdomain() reads the translation the site installed
 * (wp-content/languages/plugins/tollgate-updater-<locale>.mo) first, then the one shipped in the
 * SDK's own languages/ folder; the first loaded wins for each string. The template is
 * languages/tollgate-updater.pot (scripts/wordpress-pot.ts).
 */
final class Translations
{
    const DOMAIN = 'tollgate-updater';

    /** @var bool */
    private static $loaded = false;

    /** On `init` (WordPress knows the user's locale then), or now when `init` has run. */
    public static function hook(): void
    {
        if (did_action('init')) {
            self::load();
        } else {
            add_action('init', [self::class, 'load']);
        }
    }

    public static function load(): void
    {
        if (self::$loaded) {
            return;
        }
        self::$loaded = true;
        $locale = function_exists('determine_locale') ? determine_locale() : get_locale();
        $locale = (string) apply_filters('plugin_locale', $locale, self::DOMAIN);
        $file = self::DOMAIN . '-' . $locale . '.mo';
        load_textdomain(self::DOMAIN, WP_LANG_DIR . '/plugins/' . $file);
        load_textdomain(self::DOMAIN, dirname(__DIR__) . '/languages/' . $file);
    }
}
