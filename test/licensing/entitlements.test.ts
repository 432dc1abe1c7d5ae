import { describe, expect, it } from 'vitest';
import {
  evaluateLicense,
  type LicenseFacts,
  parseTimestamp,
} from '../../src/modules/licensing/entitlements.js';

const NOW = new Date('2026-06-01T12:00:00Z');
const CREATED = '2026-01-01T00:00:00.000Z';

const facts = (over: Partial<LicenseFacts> = {}): LicenseFacts => ({
  status: 'active',
  usage_expires_at: null,
  entitlement_policy: null,
  created_at: CREATED,
  subscription_linked: false,
  subscription_status: null,
  ...over,
});

const FUTURE = '2027-01-01T00:00:00Z';
const PAST = '2026-05-01T00:00:00Z';

describe('effective status, the table of docs/licensing.md row by row', () => {
  it('active, not expired, unlinked, identity active -> valid', () => {
    expect(evaluateLicense(facts({ usage_expires_at: FUTURE }), NOW, true).effective_status).toBe('valid');
  });
  it('active, not expired, subscription valid, identity active -> valid', () => {
    const f = facts({ subscription_linked: true, subscription_status: 'active' });
    expect(evaluateLicense(f, NOW, true).effective_status).toBe('valid');
    const pending = facts({ subscription_linked: true, subscription_status: 'pending-cancel' });
    expect(evaluateLicense(pending, NOW, true).effective_status).toBe('valid');
  });
  it('active, usage expired, any subscription, any identity -> expired', () => {
    for (const sub of [null, 'active', 'cancelled']) {
      for (const identity of [true, false]) {
        const f = facts({
          usage_expires_at: PAST,
          subscription_linked: sub !== null,
          subscription_status: sub,
        });
        expect(evaluateLicense(f, NOW, identity).effective_status).toBe('expired');
      }
    }
  });
  it('expiry is inclusive: at the expiry instant the license is expired', () => {
    expect(
      evaluateLicense(facts({ usage_expires_at: '2026-06-01T12:00:00Z' }), NOW, true).effective_status,
    ).toBe('expired');
  });
  it('active, not expired, subscription not valid, any identity -> subscription_inactive', () => {
    for (const status of ['cancelled', 'expired', 'on-hold', 'pending', null]) {
      for (const identity of [true, false]) {
        const f = facts({ subscription_linked: true, subscription_status: status });
        expect(evaluateLicense(f, NOW, identity).effective_status).toBe('subscription_inactive');
      }
    }
  });
  it('active, unreadable usage expiry -> invalid_usage_expiry', () => {
    for (const raw of [
      'soon',
      '',
      '0000-00-00 00:00:00',
      '2026-02-30T00:00:00Z',
      '2026-13-01',
      '1750000000',
    ]) {
      const f = facts({ usage_expires_at: raw, subscription_linked: true, subscription_status: 'cancelled' });
      expect(evaluateLicense(f, NOW, true).effective_status, raw).toBe('invalid_usage_expiry');
    }
  });
  it('active, not expired, subscription valid or unlinked, identity not active -> domain_not_activated', () => {
    expect(evaluateLicense(facts(), NOW, false).effective_status).toBe('domain_not_activated');
    const f = facts({ subscription_linked: true, subscription_status: 'active' });
    expect(evaluateLicense(f, NOW, false).effective_status).toBe('domain_not_activated');
  });
  it('revoked, whatever else -> revoked', () => {
    const f = facts({ status: 'revoked', usage_expires_at: 'garbage', subscription_linked: true });
    expect(evaluateLicense(f, NOW, false).effective_status).toBe('revoked');
    expect(evaluateLicense(facts({ status: 'revoked' }), NOW, true).effective_status).toBe('revoked');
  });
  it('an unknown stored status -> license_inactive', () => {
    expect(evaluateLicense(facts({ status: 'suspended' }), NOW, true).effective_status).toBe(
      'license_inactive',
    );
  });
  it('without an identity question, a usable license is valid', () => {
    expect(evaluateLicense(facts(), NOW).effective_status).toBe('valid');
  });
  it('expiry of the update window does not change the usage status', () => {
    const policy = JSON.stringify({
      issued_at: '2025-01-01T00:00:00Z',
      usage: { mode: 'lifetime' },
      updates: { mode: 'days', days: 30 },
    });
    const ev = evaluateLicense(facts({ entitlement_policy: policy }), NOW, true);
    expect(ev.effective_status).toBe('valid');
    expect(ev.entitlements.update_entitled).toBe(false);
    expect(ev.entitlements.license_active).toBe(true);
  });
});

describe('entitlements object', () => {
  it('legacy: updates follow the usage expiry, support unspecified', () => {
    const ev = evaluateLicense(facts({ usage_expires_at: FUTURE }), NOW);
    expect(ev.entitlements).toEqual({
      license_active: true,
      update_entitled: true,
      support_active: null,
      usage_expires_at: '2027-01-01 00:00:00',
      usage_expires_at_utc: '2027-01-01T00:00:00Z',
      updates_expires_at: '2027-01-01 00:00:00',
      support_expires_at: null,
      policy_mode: 'legacy',
      historical_downloads: false,
      history_access: false,
      updates_mode: 'license',
      support_mode: 'unspecified',
      usage_expiry_valid: true,
      policy_valid: true,
      policy_error: null,
      issued_at: '2026-01-01 00:00:00',
      subscription_status: null,
      subscription_active: false,
      subscription_linked: false,
    });
    expect(ev.expires_at).toBe('2027-01-01 00:00:00');
    expect(ev.usage_expires_at_utc).toBe('2027-01-01T00:00:00Z');
    expect(ev.is_expired).toBe(false);
  });

  it('legacy lifetime: no expiry anywhere; usage_expires_at_utc is the empty string', () => {
    const ev = evaluateLicense(facts(), NOW);
    expect(ev.entitlements.usage_expires_at).toBeNull();
    expect(ev.entitlements.usage_expires_at_utc).toBe('');
    expect(ev.entitlements.updates_expires_at).toBeNull();
    expect(ev.entitlements.update_entitled).toBe(true);
    expect(ev.expires_at).toBeNull();
  });

  it('legacy expired: no usage, no updates', () => {
    const ev = evaluateLicense(facts({ usage_expires_at: PAST }), NOW);
    expect(ev.entitlements.license_active).toBe(false);
    expect(ev.entitlements.update_entitled).toBe(false);
    expect(ev.is_expired).toBe(true);
  });

  it('explicit: dedicated cutoffs counted from issued_at', () => {
    const policy = JSON.stringify({
      issued_at: '2026-01-01T00:00:00Z',
      usage: { mode: 'lifetime' },
      updates: { mode: 'days', days: 365 },
      support: { mode: 'days', days: 90 },
      historical_downloads: true,
    });
    const e = evaluateLicense(facts({ entitlement_policy: policy }), NOW).entitlements;
    expect(e.policy_mode).toBe('explicit');
    expect(e.updates_mode).toBe('days');
    expect(e.support_mode).toBe('days');
    expect(e.updates_expires_at).toBe('2027-01-01 00:00:00');
    expect(e.update_entitled).toBe(true);
    expect(e.support_expires_at).toBe('2026-04-01 00:00:00');
    expect(e.support_active).toBe(false);
    expect(e.historical_downloads).toBe(true);
    expect(e.history_access).toBe(true);
    expect(e.issued_at).toBe('2026-01-01 00:00:00');
    expect(e.policy_valid).toBe(true);
    expect(e.policy_error).toBeNull();
  });

  it('explicit: an explicit expires_at (moved by a renewal) wins over days', () => {
    const policy = JSON.stringify({
      issued_at: '2025-01-01T00:00:00Z',
      usage: { mode: 'lifetime' },
      updates: { mode: 'days', days: 30, expires_at: '2026-12-31T00:00:00Z' },
    });
    const e = evaluateLicense(facts({ entitlement_policy: policy }), NOW).entitlements;
    expect(e.updates_expires_at).toBe('2026-12-31 00:00:00');
    expect(e.update_entitled).toBe(true);
  });

  it('explicit without issued_at counts from the license creation', () => {
    const policy = JSON.stringify({ usage: { mode: 'lifetime' }, updates: { mode: 'days', days: 10 } });
    const e = evaluateLicense(facts({ entitlement_policy: policy }), NOW).entitlements;
    expect(e.updates_expires_at).toBe('2026-01-11 00:00:00');
    expect(e.update_entitled).toBe(false);
    expect(e.support_mode).toBe('unspecified');
    expect(e.support_active).toBeNull();
  });

  it('explicit with updates following the license: cutoff is the usage expiry', () => {
    const policy = JSON.stringify({ usage: { mode: 'days', days: 400 }, updates: { mode: 'license' } });
    const e = evaluateLicense(
      facts({ entitlement_policy: policy, usage_expires_at: FUTURE }),
      NOW,
    ).entitlements;
    expect(e.updates_mode).toBe('license');
    expect(e.updates_expires_at).toBe('2027-01-01 00:00:00');
    expect(e.update_entitled).toBe(true);
  });

  it('explicit on a revoked license: no update, support or history rights', () => {
    const policy = JSON.stringify({
      usage: { mode: 'lifetime' },
      updates: { mode: 'license' },
      support: { mode: 'days', days: 3650 },
      historical_downloads: true,
    });
    const e = evaluateLicense(facts({ status: 'revoked', entitlement_policy: policy }), NOW).entitlements;
    expect(e.license_active).toBe(false);
    expect(e.update_entitled).toBe(false);
    expect(e.support_active).toBe(false);
    expect(e.historical_downloads).toBe(true);
    expect(e.history_access).toBe(false);
  });

  const unreadable: [string, string][] = [
    ['not json', '{'],
    ['not an object', '[1,2]'],
    ['no updates', JSON.stringify({ usage: { mode: 'lifetime' } })],
    ['unknown updates mode', JSON.stringify({ updates: { mode: 'forever' } })],
    ['days without days', JSON.stringify({ updates: { mode: 'days' } })],
    ['days not a number', JSON.stringify({ updates: { mode: 'days', days: '30' } })],
    ['bad expires_at', JSON.stringify({ updates: { mode: 'days', expires_at: 'later' } })],
    ['bad issued_at', JSON.stringify({ issued_at: 'then', updates: { mode: 'license' } })],
    ['bad support', JSON.stringify({ updates: { mode: 'license' }, support: { mode: 'lifetime' } })],
    ['historical not boolean', JSON.stringify({ updates: { mode: 'license' }, historical_downloads: 'yes' })],
  ];
  for (const [why, snapshot] of unreadable) {
    it(`missing (fail-closed) when the snapshot is unreadable: ${why}`, () => {
      const ev = evaluateLicense(facts({ entitlement_policy: snapshot }), NOW, true);
      expect(ev.entitlements).toMatchObject({
        policy_mode: 'missing',
        policy_valid: false,
        policy_error: 'invalid_entitlement_snapshot',
        update_entitled: false,
        support_active: false,
        historical_downloads: false,
        history_access: false,
        updates_expires_at: null,
        support_expires_at: null,
      });
      // Usage is not the policy's to deny: the license itself stays valid.
      expect(ev.entitlements.license_active).toBe(true);
      expect(ev.effective_status).toBe('valid');
    });
  }

  it('invalid usage expiry: usage_expiry_valid false, nothing active, is_expired true (fail-closed)', () => {
    const ev = evaluateLicense(facts({ usage_expires_at: 'tomorrow' }), NOW);
    expect(ev.entitlements.usage_expiry_valid).toBe(false);
    expect(ev.entitlements.license_active).toBe(false);
    expect(ev.entitlements.update_entitled).toBe(false);
    expect(ev.entitlements.usage_expires_at).toBeNull();
    expect(ev.entitlements.usage_expires_at_utc).toBe('');
    expect(ev.expires_at).toBeNull();
    expect(ev.is_expired).toBe(true);
  });

  it('subscription fields: linked, status and whether it counts as active', () => {
    const linked = evaluateLicense(facts({ subscription_linked: true, subscription_status: 'on-hold' }), NOW);
    expect(linked.entitlements).toMatchObject({
      subscription_linked: true,
      subscription_status: 'on-hold',
      subscription_active: false,
      license_active: false,
    });
    const gone = evaluateLicense(facts({ subscription_linked: true, subscription_status: null }), NOW);
    expect(gone.effective_status).toBe('subscription_inactive');
  });
});

describe('stored timestamps', () => {
  it('reads RFC 3339 and the legacy form as UTC; refuses impossible dates', () => {
    expect(parseTimestamp('2026-03-01T10:00:00Z')?.toISOString()).toBe('2026-03-01T10:00:00.000Z');
    expect(parseTimestamp('2026-03-01T10:00:00.123456Z')?.toISOString()).toBe('2026-03-01T10:00:00.123Z');
    expect(parseTimestamp('2026-03-01 10:00:00')?.toISOString()).toBe('2026-03-01T10:00:00.000Z');
    expect(parseTimestamp('2026-03-01T12:00:00+02:00')?.toISOString()).toBe('2026-03-01T10:00:00.000Z');
    expect(parseTimestamp('2026-02-29T00:00:00Z')).toBeNull();
    expect(parseTimestamp('2028-02-29T00:00:00Z')?.toISOString()).toBe('2028-02-29T00:00:00.000Z');
    expect(parseTimestamp('2026-03-01T05:30:00-04:30')?.toISOString()).toBe('2026-03-01T10:00:00.000Z');
    expect(parseTimestamp('2026-03-01T10:00:00+24:00')).toBeNull();
    expect(parseTimestamp('2026-03-01T24:00:00Z')).toBeNull();
    expect(parseTimestamp('2026-03-01')).toBeNull();
    expect(parseTimestamp('2026-04-31T00:00:00Z')).toBeNull();
    expect(parseTimestamp('2026-13-01T00:00:00Z')).toBeNull();
    expect(parseTimestamp('2026-00-10T00:00:00Z')).toBeNull();
    expect(parseTimestamp('2026-03-00T00:00:00Z')).toBeNull();
    expect(parseTimestamp('2026-03-01T10:60:00Z')).toBeNull();
    expect(parseTimestamp('2026-03-01T10:00:60Z')).toBeNull();
    expect(parseTimestamp('1900-02-29T00:00:00Z')).toBeNull();
    expect(parseTimestamp('2000-02-29T00:00:00Z')?.toISOString()).toBe('2000-02-29T00:00:00.000Z');
    expect(parseTimestamp('2026-12-31T23:59:59z')?.toISOString()).toBe('2026-12-31T23:59:59.000Z');
    // Years below 100 are years, not 1900 + n.
    expect(parseTimestamp('0050-06-01T00:00:00Z')?.toISOString()).toBe('0050-06-01T00:00:00.000Z');
  });
});
