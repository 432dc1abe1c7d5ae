import { html } from './html.js';

/** The account pages, in the order of the account menu (docs/storefront.md, 'Your account'). */
const PAGES = [
  ['licenses', '/account/licenses', 'My licenses'],
  ['downloads', '/account/downloads', 'Downloads'],
  ['orders', '/account/orders', 'My orders'],
  ['subscriptions', '/account/subscriptions', 'Subscriptions'],
  ['profile', '/account/profile', 'Profile'],
] as const;

export type AccountPage = (typeof PAGES)[number][0];

/** The menu every account page shows above its heading; the current page is marked `aria-current`. */
export function accountNav(current: AccountPage) {
  return html`<nav class="account-nav" aria-label="Your account"><ul>${PAGES.map(
    ([key, href, label]) =>
      html`<li><a href="${href}"${key === current ? html` aria-current="page"` : ''}>${label}</a></li>`,
  )}</ul></nav>`;
}
