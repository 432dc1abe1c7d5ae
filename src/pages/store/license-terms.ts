import type { EntitlementPolicy, Product, Variation } from '../../modules/catalogue/catalogue.model.js';
import { resolveActivationLimit } from '../../modules/catalogue/catalogue.model.js';
import type { Release } from '../../modules/releases/releases.model.js';
import { type Html, html } from '../html.js';

/**
 * What a license of a product buys, in words a buyer reads on the product's page
 * (docs/storefront.md, 'Product pages'): its sites, its updates period, and what the current
 * release needs to run.
 */

/**
 * Made on first use: the first Intl formatter a process makes maps in ICU's data, about 8 MB an
 * idle server need not hold (docs/performance.md, 'What an idle server loads').
 */
let DATE: Intl.DateTimeFormat | undefined;

/** "24 November 2026" for a timestamp; '' for none or one that is not a date. */
export function dayInWords(at: string | null | undefined): string {
  if (!at) return '';
  const time = Date.parse(at);
  if (Number.isNaN(time)) return '';
  DATE ??= new Intl.DateTimeFormat('en-GB', {
    day: 'numeric',
    month: 'long',
    year: 'numeric',
    timeZone: 'UTC',
  });
  return DATE.format(time);
}

/** "1 year", "2 years", "30 days": a number of days as a buyer counts them. */
function period(days: number): string {
  if (days % 365 === 0) return days === 365 ? '1 year' : `${days / 365} years`;
  return days === 1 ? '1 day' : `${days} days`;
}

/** 0 is unlimited. */
export function sitesInWords(limit: number): string {
  if (limit === 0) return 'Unlimited sites';
  return limit === 1 ? '1 site' : `${limit} sites`;
}

/**
 * The updates a license brings, from the product's entitlement policy (docs/catalogue.md): a
 * number of days ("1 year of updates"), for as long as a subscription or a license of limited
 * length runs, or for ever ("Lifetime updates"). With no policy a license follows its usage
 * expiry: a subscription's while it is active, anything else for ever.
 */
export function updatesInWords(policy: EntitlementPolicy | null, subscription: boolean): string {
  const support =
    policy?.support?.mode === 'days' && policy.support.days !== undefined ? policy.support.days : null;
  if (policy?.updates.mode === 'days' && policy.updates.days !== undefined) {
    const days = policy.updates.days;
    return support === days ? `${period(days)} of updates and support` : `${period(days)} of updates`;
  }
  const usage = policy?.usage ?? { mode: subscription ? 'subscription' : 'lifetime' };
  if (usage.mode === 'subscription') return 'Updates while your subscription is active';
  if (usage.mode === 'days' && usage.days !== undefined) return `${period(usage.days)} of updates`;
  return 'Lifetime updates';
}

/** "WordPress 6.2 or later", "PHP 7.4 or later", from the release's header; empty when it states none. */
export function requirementsInWords(release: Pick<Release, 'requires' | 'requires_php'> | null): string[] {
  if (!release) return [];
  const out: string[] = [];
  if (release.requires) out.push(`WordPress ${release.requires} or later`);
  if (release.requires_php) out.push(`PHP ${release.requires_php} or later`);
  return out;
}

/** The product page's "What a license includes" card. */
export function licenseTermsCard(
  product: Product,
  release: Pick<Release, 'requires' | 'requires_php' | 'version' | 'release_date'> | null,
  defaultLimit: number,
): Html {
  const subscription = product.subscription !== null;
  const limit = (v: Variation | null) => sitesInWords(resolveActivationLimit(product, v, defaultLimit));
  // Options differ in sites or in updates: each says its own.
  const perOption = product.variations.map((v) => ({
    name: v.name,
    sites: limit(v),
    updates: updatesInWords(v.entitlement_policy ?? product.entitlement_policy, subscription),
  }));
  const same =
    perOption.length === 0 ||
    perOption.every((o) => o.sites === perOption[0]!.sites && o.updates === perOption[0]!.updates);
  const sites = same ? (perOption[0]?.sites ?? limit(null)) : null;
  const updates = same
    ? (perOption[0]?.updates ?? updatesInWords(product.entitlement_policy, subscription))
    : null;
  const requirements = requirementsInWords(release);
  return html`<section class="card license-terms" aria-labelledby="terms-title">
  <h2 id="terms-title">What a license includes</h2>
  <dl class="facts">
    ${
      same
        ? html`<dt>Sites</dt><dd data-term="sites">${sites}</dd>
    <dt>Updates</dt><dd data-term="updates">${updates}</dd>`
        : perOption.map((o) => html`<dt>${o.name}</dt><dd data-term="option">${o.sites} · ${o.updates}</dd>`)
    }
    ${
      requirements.length > 0
        ? html`<dt>Requires</dt><dd data-term="requires">${requirements.join(', ')}</dd>`
        : ''
    }
    ${
      release
        ? html`<dt>Current version</dt><dd data-term="version">${release.version}, released ${dayInWords(release.release_date)}</dd>`
        : ''
    }
  </dl>
  <p class="muted">A site is one website where you activate the license; deactivate it there to move it to another.</p>
</section>`;
}
