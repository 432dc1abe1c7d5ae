import type { FastifyReply } from 'fastify';
import type { Settings } from '../../modules/settings/settings.schemas.js';
import { type Html, html } from '../html.js';
import { documentStart, STYLESHEET_PATH } from '../layout.js';
import { type StoreIdentity, storeHeader } from './header.js';

export type { StoreIdentity } from './header.js';

import { STORE_STYLESHEET_PATH, themeHref } from './theme.js';

/** Where the store's script is served (src/pages/store/checkout.ts; its source is client/store.ts). */
export const STORE_SCRIPT_PATH = '/store/assets/store.js';

export const identityOf = (s: Settings): StoreIdentity => ({
  name: s.store_name,
  logo: s.store_logo,
  accent: s.store_accent_color,
  terms: s.store_terms_url,
  test: s.store_mode === 'test',
});

export interface StorePageOptions {
  /** The page's absolute address (rel=canonical). */
  canonical?: string;
  /**
   * Seconds a shared cache may keep the page: only for pages that are the same for every visitor
   * (the catalogue and product pages carry no cookie-dependent content). Default: not cached.
   */
  maxAge?: number;
  description?: string;
  /** Load the store's script (/store/assets/store.js): the cart, checkout and pay pages. */
  script?: boolean;
}

export function storeDocument(store: StoreIdentity, title: string, body: Html, opts: StorePageOptions = {}) {
  return html`${documentStart(`${title} · ${store.name}`)}
${opts.description ? html`<meta name="description" content="${opts.description}">` : ''}
${opts.canonical ? html`<link rel="canonical" href="${opts.canonical}">` : ''}
<link rel="stylesheet" href="${STYLESHEET_PATH}">
<link rel="stylesheet" href="${STORE_STYLESHEET_PATH}">
<link rel="stylesheet" href="${themeHref(store.accent)}">
${opts.script ? html`<script src="${STORE_SCRIPT_PATH}" defer></script>` : ''}
</head>
<body>
${storeHeader(store)}
<main class="store">
${body}
</main>
<footer class="store-foot">
  <span>© ${store.name}</span>
  ${store.terms ? html`<a href="${store.terms}">Terms and conditions</a>` : ''}
</footer>
</body>
</html>
`.text;
}

export function sendStorePage(
  reply: FastifyReply,
  status: number,
  store: StoreIdentity,
  title: string,
  body: Html,
  opts: StorePageOptions = {},
) {
  // A page that sets a cookie is never shared, whatever it asked for.
  if (opts.maxAge && !reply.hasHeader('set-cookie')) {
    reply.header('cache-control', `public, max-age=${opts.maxAge}`);
  }
  return reply
    .status(status)
    .type('text/html; charset=utf-8')
    .send(storeDocument(store, title, body, opts));
}
