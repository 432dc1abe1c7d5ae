import { describe, expect, it } from 'vitest';
import { authorizeRelease } from '../../src/modules/distribution/authorize.js';
import { evaluateLicense } from '../../src/modules/licensing/entitlements.js';

/** The pure entitlement rule of candidate authorization (docs/distribution.md), case by case. */
const now = new Date('2026-06-01T00:00:00Z');
const facts = (over: Partial<Parameters<typeof evaluateLicense>[0]> = {}) => ({
  status: 'active',
  usage_expires_at: null,
  entitlement_policy: null,
  created_at: '2026-01-01T00:00:00.000Z',
  subscription_linked: false,
  subscription_status: null,
  ...over,
});
const ent = (over = {}) => evaluateLicense(facts(over), now).entitlements;
const release = (published: string | null, product = 1) => ({
  product_id: product,
  published_at: published,
  release_date: published ?? 'garbage',
});
const windowPolicy = (expires: string, historical: boolean) =>
  JSON.stringify({ updates: { mode: 'days', expires_at: expires }, historical_downloads: historical });

describe('authorizeRelease', () => {
  it('an open update window entitles every release', () => {
    expect(authorizeRelease(ent(), release('2026-05-01 00:00:00'), 1, 'install')).toBeNull();
    expect(authorizeRelease(ent(), release('2026-05-01 00:00:00'), 1, 'update')).toBeNull();
  });

  it('400 invalid_release_purpose for any other purpose', () => {
    expect(authorizeRelease(ent(), release('2026-05-01 00:00:00'), 1, 'download')).toBe(
      'invalid_release_purpose',
    );
  });

  it('403 release_product_not_entitled for a release of another product', () => {
    expect(authorizeRelease(ent(), release('2026-05-01 00:00:00', 2), 1, 'install')).toBe(
      'release_product_not_entitled',
    );
  });

  it('403 license_usage_inactive when usage is not active', () => {
    expect(authorizeRelease(ent({ status: 'revoked' }), release('2026-05-01 00:00:00'), 1, 'install')).toBe(
      'license_usage_inactive',
    );
  });

  it('500 invalid_release_date when the publication time cannot be read', () => {
    expect(authorizeRelease(ent(), release(null), 1, 'install')).toBe('invalid_release_date');
  });

  it('closed window: release_not_entitled without history; history allows releases up to the cutoff only', () => {
    const closed = ent({ entitlement_policy: windowPolicy('2026-03-01T00:00:00Z', false) });
    expect(authorizeRelease(closed, release('2026-02-01 00:00:00'), 1, 'reinstall')).toBe(
      'release_not_entitled',
    );
    const hist = ent({ entitlement_policy: windowPolicy('2026-03-01T00:00:00Z', true) });
    expect(authorizeRelease(hist, release('2026-02-01 00:00:00'), 1, 'reinstall')).toBeNull();
    expect(authorizeRelease(hist, release('2026-03-01 00:00:00'), 1, 'update')).toBeNull();
    expect(authorizeRelease(hist, release('2026-03-01 00:00:01'), 1, 'update')).toBe('release_not_entitled');
  });

  it('an unreadable snapshot grants nothing', () => {
    expect(
      authorizeRelease(ent({ entitlement_policy: '{' }), release('2026-05-01 00:00:00'), 1, 'install'),
    ).toBe('release_not_entitled');
  });
});
