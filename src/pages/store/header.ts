import { type Html, html } from '../html.js';

/** The store's identity as the settings give it (docs/storefront.md, 'Branding'). */
export interface StoreIdentity {
  name: string;
  /** The logo's image hash, or "" for none. */
  logo: string;
  /** #rrggbb */
  accent: string;
  /** The terms page, or "" for none. */
  terms: string;
  /** The store is in test mode: every page says that no payment is real (docs/storefront.md). */
  test: boolean;
}

/**
 * Above every store and account page while the store is in test mode (docs/storefront.md, 'Test mode').
 * Plain text, not a live region: `role="status"` is for what a page says after an action (the
 * notices), which assistive technology announces, and which a standing banner would shadow.
 */
const testModeBanner = html`<p class="test-mode-banner"><strong>Test mode: no real payments.</strong> This store is being set up: nothing bought here is charged or delivered for real.</p>
`;

/** The logo's file: the 400 px rendering of its image. */
export const logoPath = (logo: string) => `/media/${logo}-400.webp`;

/**
 * The header every store and account page shares: logo and name (home), the catalogue, the
 * customer's licenses, and on account pages who is signed in (`who`).
 */
export function storeHeader(store: StoreIdentity, who: Html | '' = ''): Html {
  return html`${store.test ? testModeBanner : ''}<header class="store-top">
  <a class="store-brand" href="/">${store.logo ? html`<img src="${logoPath(store.logo)}" alt="" width="160" height="40">` : ''}<span>${store.name}</span></a>
  <nav class="store-nav" aria-label="Store">
    <a href="/">Products</a>
    <a href="/account/licenses">My licenses</a>
  </nav>
  ${who}
</header>`;
}
