<?php

namespace Tollgate;

/**
 * The SDK's one option per product, `tollgate_<slug>` (not autoloaded; a network option for a
 * plugin network-activated on a multisite): the license key, the
 * activation id, the installation UUID, the last update answer (never its download URL), the last
 * refusal, the store's public keys, the last validation with its receipt, and the time before
 * which the store asked not to be called again.
 */
final class Settings
{
    /** @var string */
    private $name;
    /** @var Product */
    private $product;

    public function __construct(Product $product)
    {
        $this->product = $product;
        $this->name = 'tollgate_' . $product->slug;
    }

    public function name(): string
    {
        return $this->name;
    }

    public function all(): array
    {
        $state = $this->product->network ? get_site_option($this->name, []) : get_option($this->name, []);
        return is_array($state) ? $state : [];
    }

    /** @return mixed */
    public function get(string $field)
    {
        return $this->all()[$field] ?? null;
    }

    public function update(array $changes): array
    {
        $state = array_merge($this->all(), $changes);
        if ($this->product->network) {
            update_site_option($this->name, $state);
        } else {
            update_option($this->name, $state, false);
        }
        return $state;
    }

    public function delete(): void
    {
        if ($this->product->network) {
            delete_site_option($this->name);
        } else {
            delete_option($this->name);
        }
    }

    /** The installation UUID, generated once and kept (docs/licensing.md section 1). */
    public function installation_id(): string
    {
        $id = $this->get('installation_id');
        if (!is_string($id) || !preg_match('/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/', $id)) {
            $id = strtolower(wp_generate_uuid4());
            $this->update(['installation_id' => $id]);
        }
        return $id;
    }

    public function license_key(): string
    {
        $key = $this->get('license_key');
        return is_string($key) ? $key : '';
    }

    public function backed_off(array $state, int $now): bool
    {
        return isset($state['backoff_until']) && $now < (int) $state['backoff_until'];
    }

    /** Remembers a 429's `retry_after` (docs/distribution.md section 7). */
    public function note_rate_limit(array $answer, int $now): void
    {
        $data = $answer['body']['data'] ?? [];
        $retry = is_array($data) && isset($data['retry_after']) ? (int) $data['retry_after'] : 60;
        $this->update(['backoff_until' => $now + max(1, min(3600, $retry))]);
    }
}
