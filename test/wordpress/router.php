<?php
/**
 * `php -S` router for a subdirectory multisite (test/wordpress/helpers.ts): what the web server's
 * rewrite rules do for WordPress, /site2/wp-admin/… served by /wp-admin/… and every other address
 * that is no file by index.php.
 */
$root = $_SERVER['DOCUMENT_ROOT'];
$path = (string) parse_url($_SERVER['REQUEST_URI'], PHP_URL_PATH);
if ($path !== '/' && is_file($root . $path) && substr($path, -4) !== '.php') {
    return false;
}
if (!file_exists($root . $path) && preg_match('#^/[^/]+(/wp-(?:admin|includes|content)(?:/.*)?|/wp-[a-z-]+\.php)$#', $path, $m)) {
    $path = $m[1];
}
if (is_dir($root . $path)) {
    $path = rtrim($path, '/') . '/index.php';
}
$file = is_file($root . $path) ? $root . $path : $root . '/index.php';
if (substr($file, -4) !== '.php') {
    readfile($file);
    return true;
}
$_SERVER['SCRIPT_FILENAME'] = $file;
$_SERVER['SCRIPT_NAME'] = substr($file, strlen($root));
$_SERVER['PHP_SELF'] = $_SERVER['SCRIPT_NAME'];
chdir(dirname($file));
require $file;
