<?php
/**
 * The WordPress SDK's checks on one PHP line, run by test/wordpress/php-lines.test.ts inside PHP
 * compiled to WebAssembly (7.4 to 8.4), where WordPress itself cannot run (no MySQL socket):
 *
 * - every SDK file parses (token_get_all with TOKEN_PARSE: what `php -l` reports) and compiles and
 *   loads without a warning or a deprecation (PHP 8.4's implicit nullable types, 8.2's dynamic
 *   properties, 8.1's internal return types…);
 * - every internal function the SDK calls, unless it guards it with function_exists(), exists;
 * - the SDK's own logic, which needs no database: offline receipts verified with WordPress's
 *   sodium_compat (what a site without ext-sodium runs), the messages and their plurals, the
 *   answers' codes, and the version comparisons the update decisions make.
 *
 * Prints one JSON line: {"version", "problems": [...], "checks": {...}}.
 * Arguments: the SDK's folder, the sodium_compat folder, the JSON list of internal functions
 * the SDK calls (read from the code by the test on the host's PHP).
 */

$sdk = $argv[1];
$sodium_compat = $argv[2];
$functions = json_decode($argv[3], true);
$problems = [];
error_reporting(E_ALL);
set_error_handler(function ($errno, $message, $file, $line) use (&$problems, $sdk) {
    // The SDK's own (WordPress 6.1's sodium_compat has PHP 8.4 deprecations of its own).
    if (strpos($file, $sdk . '/') === 0) {
        $problems[] = "PHP error $errno: $message in $file:$line";
    }
    return true;
});

// The few WordPress functions the checked code calls, as WordPress defines them.
define('ABSPATH', '/wordpress/');
function __($text, $domain = 'default') { return $text; }
function _n($single, $plural, $number, $domain = 'default') { return $number == 1 ? $single : $plural; }
function esc_url_raw($url) { return $url; }

$files = [];
$walk = function ($dir) use (&$walk, &$files) {
    foreach (scandir($dir) as $name) {
        if ($name[0] === '.') continue;
        $path = "$dir/$name";
        if (is_dir($path)) $walk($path);
        elseif (substr($name, -4) === '.php') $files[] = $path;
    }
};
$walk($sdk);
foreach ($files as $file) {
    try {
        token_get_all(file_get_contents($file), TOKEN_PARSE);
    } catch (\ParseError $e) {
        $problems[] = 'parse error: ' . $e->getMessage() . " in $file:" . $e->getLine();
    }
}
if ($problems) {
    echo json_encode(['version' => PHP_VERSION, 'problems' => $problems, 'checks' => []]), "\n";
    exit;
}

require $sdk . '/tollgate-updater.php';
$classes = ['Updater', 'Product', 'Settings', 'Cache', 'License', 'Signatures', 'UpdateCheck', 'Download', 'LicenseScreen', 'Client', 'Messages', 'Receipt', 'Translations'];
foreach ($classes as $class) {
    if (!class_exists('Tollgate\\' . $class, false)) {
        $problems[] = "class Tollgate\\$class is not declared";
    }
}
foreach ($functions as $function) {
    if (!function_exists($function)) {
        $problems[] = "function $function() does not exist";
    }
}

$checks = [];

// Offline receipts, signed here as the store signs them (Ed25519 over the base64url payload).
if (!function_exists('sodium_crypto_sign_verify_detached')) {
    require $sodium_compat . '/autoload.php';
}
$pair = sodium_crypto_sign_seed_keypair(str_repeat("\x07", 32));
$public = base64_encode(sodium_crypto_sign_publickey($pair));
$keys = [['id' => 'k1', 'public_key' => $public]];
$now = 1800000000;
$receipt = function (array $claims) use ($pair) {
    $payload = rtrim(strtr(base64_encode(json_encode($claims)), '+/', '-_'), '=');
    return [
        'payload' => $payload,
        'signature' => base64_encode(sodium_crypto_sign_detached($payload, sodium_crypto_sign_secretkey($pair))),
        'signing_key_id' => 'k1',
    ];
};
$site = '6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b';
$claims = [
    'installation_id' => $site,
    'domain' => 'shop.example',
    'issued_at' => gmdate('c', $now - 3600),
    'valid_until' => gmdate('c', $now + 86400),
];
$good = $receipt($claims);
$tampered = $good;
$tampered['signature'] = base64_encode(str_repeat("\0", 64));
$checks['receipt_valid'] = Tollgate\Receipt::check($good, $keys, $site, 'shop.example', $now) !== null;
$checks['receipt_tampered'] = Tollgate\Receipt::check($tampered, $keys, $site, 'shop.example', $now) !== null;
$checks['receipt_other_site'] = Tollgate\Receipt::check($good, $keys, '00000000-0000-4000-8000-000000000000', 'shop.example', $now) !== null;
$checks['receipt_other_domain'] = Tollgate\Receipt::check($good, $keys, $site, 'other.example', $now) !== null;
$checks['receipt_unknown_key'] = Tollgate\Receipt::check($good, [['id' => 'k2', 'public_key' => $public]], $site, 'shop.example', $now) !== null;
$checks['receipt_ran_out'] = Tollgate\Receipt::check($good, $keys, $site, 'shop.example', $now + 2 * 86400) !== null;
$checks['receipt_from_future'] = Tollgate\Receipt::check($receipt(['issued_at' => gmdate('c', $now + 3 * 86400), 'valid_until' => gmdate('c', $now + 9 * 86400)] + $claims), $keys, $site, 'shop.example', $now) !== null;
$checks['receipt_usage_over'] = Tollgate\Receipt::check($receipt(['usage_expires_at' => gmdate('Y-m-d H:i:s', $now - 60)] + $claims), $keys, $site, 'shop.example', $now) !== null;

// Messages: the store's own text first; the version said once; plurals.
$checks['message_store'] = Tollgate\Messages::of('expired', 'From the store.');
$checks['message_fallback'] = Tollgate\Messages::of('expired', '') === Tollgate\Messages::text('expired');
$checks['message_with_version_store'] = Tollgate\Messages::with_version('expired', 'Version 1.1.0 is available. Renew.', '1.1.0');
$checks['message_with_version_own'] = Tollgate\Messages::with_version('expired', null, '1.1.0') === 'Version 1.1.0 is available. ' . Tollgate\Messages::text('expired');
$checks['busy_1'] = Tollgate\Messages::busy(30);
$checks['busy_3'] = Tollgate\Messages::busy(121);
$checks['renewable'] = [Tollgate\Messages::renewable('expired'), Tollgate\Messages::renewable('invalid_license')];

// The store's answers as the client reads them.
$checks['code_rest'] = Tollgate\Client::code(['status' => 403, 'body' => ['code' => 'expired', 'message' => 'x']]);
$checks['code_validate'] = Tollgate\Client::code(['status' => 200, 'body' => ['valid' => false, 'error' => 'revoked']]);
$checks['outage'] = [
    Tollgate\Client::is_outage(['status' => 0, 'error' => 'store_unreachable']),
    Tollgate\Client::is_outage(['status' => 503, 'body' => []]),
    Tollgate\Client::is_outage(['status' => 403, 'body' => ['code' => 'expired']]),
];

// The version comparisons behind "is there an update" (PHP's version_compare, as the SDK uses it).
$checks['versions'] = [
    version_compare('1.10.0', '1.9.0', '>'),
    version_compare('1.1.0', '1.1.0', '>'),
    version_compare('2.0.0-beta.1', '1.9.9', '>'),
    version_compare('1.1.0', '1.1.0-rc.1', '>'),
];

echo json_encode(['version' => PHP_VERSION, 'problems' => $problems, 'checks' => $checks]), "\n";
