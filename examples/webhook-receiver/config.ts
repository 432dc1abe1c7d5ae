import { readFileSync } from 'node:fs';

/** One trusted store: the secrets its webhooks are signed with and its pinned validation endpoint. */
export interface TrustedStore {
  /** Current secret first; during a rotation also the previous one. */
  secrets: string[];
  /** Full URL of the store's POST /licenses/validate. Pinned here, never taken from a payload. */
  validation_url: string;
}

export interface ReceiverConfig {
  host: string;
  port: number;
  /** SQLite file of the inbox and the license mapping. */
  database: string;
  /** Trusted store scopes by name: webhooks arrive at POST /webhooks/<scope>. */
  stores: Record<string, TrustedStore>;
  /** How often the revalidation worker looks for pending events. */
  revalidate_interval_ms: number;
  /** First delay before a failed revalidation is tried again (doubles each time, 10 tries). */
  retry_delay_ms: number;
  busy_timeout_ms: number;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Checks a configuration; a pinned validation URL must be HTTPS (plain HTTP only on loopback, for tests). */
export function checkConfig(
  input: Partial<ReceiverConfig> & Pick<ReceiverConfig, 'stores' | 'database'>,
): ReceiverConfig {
  const config: ReceiverConfig = {
    host: '127.0.0.1',
    port: 8787,
    revalidate_interval_ms: 1000,
    retry_delay_ms: 30_000,
    busy_timeout_ms: 5000,
    ...input,
  };
  for (const [scope, store] of Object.entries(config.stores)) {
    if (!/^[A-Za-z0-9._-]{1,100}$/.test(scope))
      throw new Error(`store scope "${scope}" must be [A-Za-z0-9._-]`);
    if (!Array.isArray(store.secrets) || store.secrets.length === 0 || store.secrets.some((s) => !s))
      throw new Error(`store "${scope}" needs at least one non-empty secret`);
    const url = new URL(store.validation_url);
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK.has(url.hostname)))
      throw new Error(`store "${scope}": validation_url must be https`);
  }
  return config;
}

export function loadConfig(file: string): ReceiverConfig {
  return checkConfig(JSON.parse(readFileSync(file, 'utf8')));
}
