import { ApiError } from '../../http/errors.js';
import { sha256 } from '../../random.js';
import { DomainError, normaliseDomain } from './domain.js';

/**
 * A website identity is the pair (installation_id, normalised domain) and nothing else
 * (docs/licensing.md, '1. The website identity'): no domain-only, UUID-only or machine_id fallback.
 * `identity_key` is the one derived key every module compares.
 */
export interface Identity {
  /** The domain as supplied (trimmed). */
  domain: string;
  domain_normalized: string;
  installation_id: string;
  identity_key: string;
}

/**
 * UUIDv4 in its canonical form: 36 characters, lowercase hexadecimal with hyphens. Uppercase is
 * refused rather than lower-cased: the documented form is lowercase (docs/licensing.md), and a
 * client that sends another spelling would compare its id wrongly elsewhere (download tokens bind
 * it verbatim).
 */
const INSTALLATION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export const isInstallationId = (value: string): boolean => INSTALLATION_ID.test(value);

/** sha256 of `installation_id|domain_normalized`, lowercase hex. */
export const identityKey = (installationId: string, domainNormalized: string): string =>
  sha256(`${installationId}|${domainNormalized}`);

/** The normalised domain, or 400 `invalid_identity`. */
export function normaliseDomainOrThrow(domain: string): string {
  try {
    return normaliseDomain(domain);
  } catch (e) {
    if (e instanceof DomainError)
      throw new ApiError('invalid_identity', { data: { params: { domain: e.message } } });
    throw e;
  }
}

/**
 * Resolves a supplied identity pair. Absent or empty fields are 400 `missing_identity`; a
 * malformed UUID or a domain that names no host is 400 `invalid_identity`.
 */
export function resolveIdentity(domain: string | undefined, installationId: string | undefined): Identity {
  if (domain === undefined || domain.trim() === '' || installationId === undefined || installationId === '') {
    throw new ApiError('missing_identity');
  }
  if (!isInstallationId(installationId)) {
    throw new ApiError('invalid_identity', {
      data: { params: { installation_id: 'lowercase UUIDv4 required' } },
    });
  }
  return identityOf(domain, installationId);
}

function identityOf(domain: string, installationId: string): Identity {
  const domainNormalized = normaliseDomainOrThrow(domain);
  return {
    domain: domain.trim(),
    domain_normalized: domainNormalized,
    installation_id: installationId,
    identity_key: identityKey(installationId, domainNormalized),
  };
}

/**
 * The installation id of a site known by its URL alone: the nil UUID, which no site sends (an
 * installation id is a version-4 UUID), so a URL-only identity never collides with a full one.
 * Not an empty text: PostgreSQL's char(36) column would pad it with spaces.
 */
export const URL_ONLY_INSTALLATION = '00000000-0000-0000-0000-000000000000';

/** Whether an activation or token names its site by URL alone (legacyIdentity). */
export const isUrlOnly = (installationId: string | null): boolean => installationId === URL_ONLY_INSTALLATION;

/**
 * The identity of a site known by its URL alone: an activation imported from another store, or
 * made through the compatibility API of the updaters already in the field (docs/migrating.md).
 * When the site later sends a full identity for the same domain, its activation takes that
 * identity in place. A URL that names no host is 400 `invalid_identity`.
 */
export function legacyIdentity(url: string): Identity {
  return identityOf(url, URL_ONLY_INSTALLATION);
}
