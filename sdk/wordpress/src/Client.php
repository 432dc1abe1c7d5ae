<?php

namespace Tollgate;

/**
 * The store's HTTP API as the updater uses it: JSON in, JSON out, through WordPress's HTTP API.
 * Answers are arrays `['status' => int, 'body' => array]`, or `['status' => 0, 'error' => string]`
 * when the store could not be reached. Nothing here logs: request bodies hold the license key and
 * answers may hold a single-use download URL.
 */
final class Client
{
    /** @var string */
    private $base;

    public function __construct(string $store_url)
    {
        $this->base = rtrim($store_url, '/') . '/v1';
    }

    public function base(): string
    {
        return $this->base;
    }

    /** @param array<string,mixed> $body */
    public function post(string $path, array $body, int $timeout = 15): array
    {
        return $this->answer(wp_remote_post($this->base . $path, [
            'timeout' => $timeout,
            'redirection' => 0,
            'headers' => ['Content-Type' => 'application/json', 'Accept' => 'application/json'],
            'body' => wp_json_encode($body),
        ]));
    }

    /** @param array<string,string> $query */
    public function get(string $path, array $query = [], int $timeout = 15): array
    {
        $url = $this->base . $path;
        if ($query) {
            $url .= '?' . http_build_query($query, '', '&', PHP_QUERY_RFC3986);
        }
        return $this->answer(wp_remote_get($url, [
            'timeout' => $timeout,
            'redirection' => 0,
            'headers' => ['Accept' => 'application/json'],
        ]));
    }

    /** @param array|\WP_Error $response */
    private function answer($response): array
    {
        if (is_wp_error($response)) {
            return ['status' => 0, 'error' => 'store_unreachable'];
        }
        $status = (int) wp_remote_retrieve_response_code($response);
        $body = json_decode((string) wp_remote_retrieve_body($response), true);
        if (!is_array($body)) {
            // A proxy's HTML page or an empty answer: treated as an outage, not as the store's word.
            return ['status' => $status >= 500 || $status === 0 ? $status : 502, 'error' => 'store_unreachable'];
        }
        return ['status' => $status, 'body' => $body];
    }

    /** True for answers that mean "the store is not there right now" rather than "the store said no". */
    public static function is_outage(array $answer): bool
    {
        return $answer['status'] === 0 || $answer['status'] >= 500 || isset($answer['error']);
    }

    /** The error code of a refusal: the REST envelope's `code`, or validate's `error`. */
    public static function code(array $answer): string
    {
        if (isset($answer['error'])) {
            return (string) $answer['error'];
        }
        $body = $answer['body'];
        if (isset($body['code']) && is_string($body['code'])) {
            return $body['code'];
        }
        if (isset($body['error']) && is_string($body['error'])) {
            return $body['error'];
        }
        return 'unknown';
    }
}
