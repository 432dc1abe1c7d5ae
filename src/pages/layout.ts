import type { FastifyReply } from 'fastify';
import { type Html, html } from './html.js';
import { type StoreIdentity, storeHeader } from './store/header.js';
import { STORE_STYLESHEET_PATH, themeHref } from './store/theme.js';

export const STYLESHEET_PATH = '/account/assets/style.css';

/** The signed-in customer as the page header shows them, with the session nonce for sign-out. */
export interface Viewer {
  email: string;
  nonce: string;
}

/**
 * Pages allow nothing but their own origin: no inline script or style, no framing, no base
 * rewriting. `formTargets` adds the origins a form may lead to after its POST (the approval page's
 * redirect back to the site: Chromium applies form-action to that redirect too).
 */
export function contentSecurityPolicy(formTargets: string[] = []): string {
  return [
    "default-src 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
    "object-src 'none'",
    `form-action ${["'self'", ...formTargets].join(' ')}`,
  ].join('; ');
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The store's identity for the page's header, set for the customer pages (src/pages/pages.ts). */
    storeIdentity?: StoreIdentity;
  }
}

/**
 * A customer page. With the store's identity (every page served by src/pages/pages.ts has it) the
 * header is the store's own, as on the catalogue: logo, name, Products and My licenses.
 */
/**
 * The start of every page, account and store alike, up to its title. No page sends a Referer:
 * the sign-in and password links carry tokens in their URLs.
 */
export const documentStart = (title: string) => html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title}</title>`;

export function layout(
  title: string,
  body: Html,
  viewer: Viewer | null = null,
  store: StoreIdentity | null = null,
): string {
  const who = viewer
    ? html`<div class="who"><span>Signed in as ${viewer.email}</span>
        <form method="post" action="/account/sign-out">
          <input type="hidden" name="_nonce" value="${viewer.nonce}">
          <button type="submit" class="link secondary">Sign out</button>
        </form></div>`
    : '';
  return html`${documentStart(`${title} · ${store ? store.name : 'Tollgate'}`)}
<link rel="stylesheet" href="${STYLESHEET_PATH}">
${
  store
    ? html`<link rel="stylesheet" href="${STORE_STYLESHEET_PATH}">
<link rel="stylesheet" href="${themeHref(store.accent)}">`
    : ''
}
</head>
<body>
${
  store
    ? storeHeader(store, who)
    : html`<header class="top"><a class="brand" href="/account/licenses">Tollgate · Your account</a>${who}</header>`
}
<main>
${body}
</main>
</body>
</html>
`.text;
}

export function sendPage(
  reply: FastifyReply,
  status: number,
  title: string,
  body: Html,
  viewer?: Viewer | null,
) {
  return reply
    .status(status)
    .type('text/html; charset=utf-8')
    .send(layout(title, body, viewer ?? null, reply.request.storeIdentity ?? null));
}

/** POST-redirect-GET: 303 so the browser follows with GET. */
export function seeOther(reply: FastifyReply, location: string) {
  return reply.status(303).header('location', location).send();
}
