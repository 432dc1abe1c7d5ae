import { hasControlCharacters } from '../releases.model.js';
import type { StorageDriver } from './driver.js';

/**
 * `external`: a manual download link at the vendor's HTTPS host. The service stores the URL and
 * the administrator-supplied SHA-256 only; it never fetches, proxies, stats or deletes the bytes,
 * so this driver has none of those capabilities.
 */
export class ExternalLinkDriver implements StorageDriver {
  readonly name = 'external';
  readonly managed = false;
}

/** A link the service will hand out: absolute https, a host, no credentials, no fragment. */
export function isValidExternalUrl(value: string): boolean {
  if (value.length > 2048 || /\s/.test(value) || hasControlCharacters(value)) return false;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return url.protocol === 'https:' && url.hostname !== '' && !url.username && !url.password && !url.hash;
}
