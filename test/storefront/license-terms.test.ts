import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminOk, createTestApp, setSettings, type TestApp } from '../helpers/app.js';
import { createProduct, publish, softwareProduct } from '../helpers/factories.js';

/**
 * A product's page says what a license buys (docs/storefront.md, 'Product pages'): sites, the
 * updates period and the current release's requirements in words, and dates as words.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
  await setSettings(t, { default_activation_limit: 2 });
});
afterAll(async () => t.close());

const terms = async (slug: string | null) => {
  const res = await t.app.inject({ method: 'GET', url: `/products/${slug}` });
  expect(res.statusCode).toBe(200);
  const term = (name: string) => new RegExp(`data-term="${name}">([^<]*)<`).exec(res.body)?.[1] ?? null;
  return {
    body: res.body,
    sites: term('sites'),
    updates: term('updates'),
    requires: term('requires'),
    version: term('version'),
  };
};

describe('what a license includes', () => {
  it('a year of updates and support, its sites, and the current release needs in words', async () => {
    const p = await softwareProduct(t, {}, {
      name: 'Terms Kit',
      activation_limit: 5,
      entitlement_policy: {
        usage: { mode: 'lifetime' },
        updates: { mode: 'days', days: 365 },
        support: { mode: 'days', days: 365 },
      },
    } as never);
    const release = await publish(t, p.id, '2.1.0');
    await adminOk(t, 'PUT', `/software/products/${p.id}/versions/${release.version_id}`, {
      requires: '6.2',
      requires_php: '7.4',
    });
    const page = await terms(p.slug);
    expect(page.sites).toBe('5 sites');
    expect(page.updates).toBe('1 year of updates and support');
    expect(page.requires).toBe('WordPress 6.2 or later, PHP 7.4 or later');
    // "2.1.0, released 28 November 2026": the date in words, never a timestamp.
    expect(page.version).toMatch(/^2\.1\.0, released \d{1,2} [A-Z][a-z]+ \d{4}$/);
    expect(page.body).not.toMatch(/Released \d{4}-\d{2}-\d{2}/);
    expect(page.body).toMatch(/Released \d{1,2} [A-Z][a-z]+ \d{4}/);
  });

  it('lifetime updates, N days, unlimited and the store default sites', async () => {
    const lifetime = await softwareProduct(t, {}, {
      activation_limit: 0,
      entitlement_policy: { usage: { mode: 'lifetime' }, updates: { mode: 'license' } },
    } as never);
    expect(await terms(lifetime.slug)).toMatchObject({
      sites: 'Unlimited sites',
      updates: 'Lifetime updates',
      requires: null,
    });
    const days = await softwareProduct(t, {}, {
      entitlement_policy: { usage: { mode: 'lifetime' }, updates: { mode: 'days', days: 90 } },
    } as never);
    expect(await terms(days.slug)).toMatchObject({ sites: '2 sites', updates: '90 days of updates' });
  });

  it('options that differ each say their own; a product sold without a license shows none', async () => {
    const p = await createProduct(t, {
      name: 'Options Terms Kit',
      variations: [
        { name: 'Personal', price: '10.00', attributes: { Sites: '1' }, activation_limit: 1 },
        { name: 'Agency', price: '90.00', attributes: { Sites: 'Unlimited' }, activation_limit: 0 },
      ],
      entitlement_policy: { usage: { mode: 'lifetime' }, updates: { mode: 'days', days: 730 } },
    } as never);
    const page = await terms(p.slug);
    expect(page.body).toContain('<dt>Personal</dt><dd data-term="option">1 site · 2 years of updates</dd>');
    expect(page.body).toContain(
      '<dt>Agency</dt><dd data-term="option">Unlimited sites · 2 years of updates</dd>',
    );
    const free = await createProduct(t, { name: 'Free Terms Kit', licensing_enabled: 'no' } as never);
    expect((await terms(free.slug)).body).not.toContain('What a license includes');
  });
});
