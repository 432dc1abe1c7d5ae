<?php
/**
 * Tollgate updater for WordPress plugins and themes (docs/sdk-wordpress.md).
 *
 * Copy this folder into your plugin or theme and require this file, or install
 * tollgate/wordpress-updater with Composer (this file is its autoload entry). Several plugins may
 * ship their own copy: the first copy loaded serves them all, so the classes are declared once.
 */

if (!defined('ABSPATH')) {
    exit;
}

if (!class_exists('Tollgate\\Updater', false)) {
    require_once __DIR__ . '/src/Translations.php';
    require_once __DIR__ . '/src/Messages.php';
    require_once __DIR__ . '/src/Client.php';
    require_once __DIR__ . '/src/Receipt.php';
    require_once __DIR__ . '/src/Product.php';
    require_once __DIR__ . '/src/Settings.php';
    require_once __DIR__ . '/src/Cache.php';
    require_once __DIR__ . '/src/Signatures.php';
    require_once __DIR__ . '/src/License.php';
    require_once __DIR__ . '/src/UpdateCheck.php';
    require_once __DIR__ . '/src/Download.php';
    require_once __DIR__ . '/src/LicenseScreen.php';
    require_once __DIR__ . '/src/Updater.php';
}
