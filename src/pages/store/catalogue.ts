import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { imagePath, productPath } from '../../modules/cart/cart.view.js';
import {
  isPublicProduct,
  type Product,
  resolveActivationLimit,
} from '../../modules/catalogue/catalogue.model.js';
import type { CatalogueService } from '../../modules/catalogue/catalogue.service.js';
import { availableCurrencies, type CurrencyContext, fromBase } from '../../modules/catalogue/currency.js';
import { fromMinor } from '../../modules/catalogue/money.js';
import { SLUG_PATTERN } from '../../modules/catalogue/slug.js';
import type { Changelog } from '../../modules/releases/releases.model.js';
import type { ReleasesService } from '../../modules/releases/releases.service.js';
import type { SettingsService } from '../../modules/settings/settings.service.js';
import { type Html, html } from '../html.js';
import { identityOf, type StoreIdentity, sendStorePage } from './layout.js';
import { dayInWords, licenseTermsCard, sitesInWords, updatesInWords } from './license-terms.js';

/** Answers a request of the updaters already in the field from its query (src/modules/legacy). */
export type LegacyPage = (request: FastifyRequest, reply: FastifyReply, query: unknown) => Promise<unknown>;

export interface CataloguePagesOptions {
  /** Answers `GET /?edd_action=…` (docs/migrating.md, 'Sites already in the field'). */
  legacy?: LegacyPage;
  catalogue: CatalogueService;
  releases: ReleasesService;
  settings: SettingsService;
  /** The store's PUBLIC_URL origin (canonical addresses). */
  origin: () => string;
}

/** Products per catalogue page. */
export const PER_PAGE = 24;
/**
 * Seconds a browser or proxy may keep a catalogue or product page: every visitor gets the same
 * page (nothing in it depends on a cookie), and a price change shows within a minute.
 */
const PAGE_MAX_AGE = 60;
const PAGE_PARAM = /^[1-9][0-9]{0,5}$/;

export const money = (minor: number, ctx: CurrencyContext) =>
  `${ctx.symbol}${fromMinor(minor, ctx.decimals)}`;

/** What a product costs in the base currency: its price, or "From" its cheapest variation. */
function basePrice(p: Product, base: CurrencyContext): string {
  if (p.variations.length === 0) return money(p.price_minor, base);
  const prices = p.variations.map((v) => v.price_minor);
  const low = Math.min(...prices);
  return low === Math.max(...prices) ? money(low, base) : `From ${money(low, base)}`;
}

function period(p: Product): string {
  if (!p.subscription) return '';
  const { period: unit, interval } = p.subscription;
  return interval === 1 ? ` / ${unit}` : ` every ${interval} ${unit}s`;
}

function productCard(p: Product, base: CurrencyContext): Html {
  return html`<li>
  <img class="thumb" src="${imagePath(p.image, 400)}" alt="" width="400" height="300" loading="lazy">
  <div class="body">
    <h2><a href="${productPath(p.slug)}">${p.name}</a></h2>
    ${p.short_description ? html`<p class="short">${p.short_description}</p>` : ''}
    <p class="price">${basePrice(p, base)}${period(p)}</p>
  </div>
</li>`;
}

/** Plain text with blank lines between paragraphs, and line breaks kept inside a paragraph. */
function paragraphs(text: string): Html[] {
  return text
    .split(/\r?\n\s*\r?\n/)
    .map((p) => p.trim())
    .filter((p) => p.length > 0)
    .map((p) => {
      const lines = p.split(/\r?\n/);
      return html`<p>${lines.map((l, i) => (i === 0 ? l : html`<br>${l}`))}</p>`;
    });
}

function changelog(c: Changelog | null): Html | string {
  if (c === null) return '';
  if (typeof c === 'string') return html`<div class="description">${paragraphs(c)}</div>`;
  return html`${c.narrative ? html`<div class="description">${paragraphs(c.narrative)}</div>` : ''}
  ${c.points.length > 0 ? html`<ul>${c.points.map((pt) => html`<li><strong>${pt.type}</strong>: ${pt.text}</li>`)}</ul>` : ''}`;
}

/**
 * The tiers of a product (docs/selling.md, 'Tiers'): its variations side by side, each a radio
 * card with its price, sites and updates, the first chosen; the add-to-cart form posts the choice.
 */
function tierChoice(
  p: Product,
  base: CurrencyContext,
  others: CurrencyContext[],
  defaultLimit: number,
): Html {
  const subscription = p.subscription !== null;
  return html`<fieldset class="choices tiers">
    <legend>Choose a tier</legend>
    <div class="tier-grid">${p.variations.map((v, i) => {
      const attrs = Object.entries(v.attributes)
        .map(([k, val]) => `${k}: ${val}`)
        .join(', ');
      return html`<div class="tier">
      <input type="radio" name="variation_id" id="tier-${v.id}" value="${v.id}"${i === 0 ? ' checked' : ''}>
      <label for="tier-${v.id}">
        <span class="name">${v.name}</span>
        <span class="vprice">${money(v.price_minor, base)}${period(p)}</span>
        <span class="term" data-term="sites">${sitesInWords(resolveActivationLimit(p, v, defaultLimit))}</span>
        <span class="term" data-term="updates">${updatesInWords(v.entitlement_policy ?? p.entitlement_policy, subscription)}</span>
        ${attrs ? html`<span class="attrs">${attrs}</span>` : ''}
        ${
          others.length > 0
            ? html`<span class="attrs">${others.map((c) => `${c.code} ${money(fromBase(v.price_minor, c), c)}`).join(' · ')}</span>`
            : ''
        }
      </label>
    </div>`;
    })}</div>
  </fieldset>`;
}

/**
 * "Add to cart": the store's script posts it to POST /v1/cart/add and opens /cart. The page is the
 * same for every visitor (it is cached), so the form holds no cart state. Without JavaScript the
 * button stays disabled and a note says why (docs/storefront.md, 'Buying').
 */
function addToCart(p: Product, base: CurrencyContext, others: CurrencyContext[], defaultLimit: number): Html {
  return html`<form class="add-to-cart" data-store-page="product" data-product="${p.id}" novalidate>
  ${p.variations.length > 0 ? tierChoice(p, base, others, defaultLimit) : ''}
  <div class="field"><label for="quantity">Quantity</label>
    <input id="quantity" name="quantity" type="number" min="1" max="9999" value="1" inputmode="numeric" required></div>
  <button type="submit" disabled>Add to cart</button>
  <noscript><p class="notice">Adding to the cart needs JavaScript.</p></noscript>
</form>
<div id="store-alert" class="store-alert" role="alert" tabindex="-1" hidden></div>`;
}

/**
 * "Start a free trial" (docs/selling.md, 'Trials'), on a product that offers one: the store's script
 * posts the email to POST /v1/trials and shows the trial key. Without JavaScript the button stays
 * disabled, as "Add to cart" does.
 */
function startTrial(p: Product): Html | string {
  if (p.trial_days === null || isPublicProduct(p)) return '';
  const days = `${p.trial_days} ${p.trial_days === 1 ? 'day' : 'days'}`;
  const sites = `${p.trial_sites} ${p.trial_sites === 1 ? 'site' : 'sites'}`;
  return html`<form class="start-trial" data-store-page="trial" data-product="${p.id}" novalidate aria-labelledby="trial-title">
  <h2 id="trial-title">Try it free for ${days}</h2>
  <p class="muted">A trial license for ${sites}, once per email and site. No payment.</p>
  <div class="field"><label for="trial-email">Email</label>
    <input id="trial-email" name="email" type="email" autocomplete="email" maxlength="254" required></div>
  <button type="submit" class="secondary" disabled>Start a free trial</button>
</form>
<div id="trial-result" class="card" role="status" hidden></div>`;
}

function notFound(store: StoreIdentity): [number, StoreIdentity, string, Html] {
  return [
    404,
    store,
    'Product not found',
    html`<section class="card"><h1>Product not found</h1>
<p>This product does not exist or is no longer sold.</p>
<p><a href="/">See all products</a></p></section>`,
  ];
}

/**
 * The catalogue (/) and a page per product (/products/<slug>): server-rendered, readable without
 * JavaScript, one query for the products of a page and one for all their variations.
 */
export async function cataloguePages(app: FastifyInstance, opts: CataloguePagesOptions) {
  const { catalogue, releases, settings, origin } = opts;

  app.get('/', async (request, reply) => {
    // The old store's address answers the updaters already in the field (docs/migrating.md).
    const query = request.query as Record<string, unknown>;
    if (opts.legacy && query.edd_action !== undefined) return opts.legacy(request, reply, query);
    const s = await settings.get();
    const store = identityOf(s);
    const raw = (request.query as Record<string, unknown>).page;
    if (raw !== undefined && (typeof raw !== 'string' || !PAGE_PARAM.test(raw))) {
      return sendStorePage(
        reply,
        400,
        store,
        'Page not found',
        html`<section class="card"><h1>Page not found</h1><p>There is no such page of products.</p>
<p><a href="/">See all products</a></p></section>`,
      );
    }
    const page = raw === undefined ? 1 : Number(raw);
    const { items, total } = await catalogue.listPublished(page, PER_PAGE);
    const pages = Math.max(1, Math.ceil(total / PER_PAGE));
    const base = availableCurrencies(s)[0]!;
    const status = page > pages ? 404 : 200;
    const body = html`<h1>${page === 1 ? 'Products' : `Products, page ${page} of ${pages}`}</h1>
${
  items.length === 0
    ? html`<section class="card"><p>${page > pages && total > 0 ? 'There is no such page of products.' : 'No products are for sale yet.'}</p></section>`
    : html`<ul class="catalogue">${items.map((p) => productCard(p, base))}</ul>`
}
${
  pages > 1
    ? html`<nav class="pager" aria-label="Pages">
  ${page > 1 && page <= pages ? html`<a rel="prev" href="${page === 2 ? '/' : `/?page=${page - 1}`}">Previous page</a>` : html`<span></span>`}
  ${page < pages ? html`<a rel="next" href="/?page=${page + 1}">Next page</a>` : ''}
</nav>`
    : ''
}`;
    return sendStorePage(reply, status, store, page === 1 ? 'Products' : `Products, page ${page}`, body, {
      canonical: `${origin()}${page === 1 ? '/' : `/?page=${page}`}`,
      maxAge: status === 200 ? PAGE_MAX_AGE : undefined,
    });
  });

  app.get('/products/:slug', async (request, reply) => {
    const s = await settings.get();
    const store = identityOf(s);
    const slug = (request.params as { slug: string }).slug;
    const product = SLUG_PATTERN.test(slug) ? await catalogue.findStorefrontProduct(slug) : null;
    if (!product) return sendStorePage(reply, ...notFound(store));
    const currencies = availableCurrencies(s);
    const base = currencies[0]!;
    const others = currencies.slice(1);
    const software =
      product.software_enabled === 'yes' ? await releases.listPublishedCandidates(product.id) : [];
    // The version shown is a stable one (docs/distribution.md, 'Channels and staged rollouts').
    const latest =
      software.find((r) => r.is_current) ??
      software.find((r) => r.channel === 'stable') ??
      software[0] ??
      null;
    const inCurrency = (minor: number) =>
      others.map((c) => html`<li>${c.code}: ${money(fromBase(minor, c), c)}</li>`);
    const body = html`<article class="product">
  <img class="picture" src="${imagePath(product.image, 1200)}"
    ${product.image ? html`srcset="${imagePath(product.image, 400)} 400w, ${imagePath(product.image, 1200)} 1200w" sizes="(max-width: 720px) 100vw, 36rem"` : ''}
    alt="${product.image ? product.name : ''}" width="1200" height="900">
  <div>
    <h1>${product.name}</h1>
    ${product.short_description ? html`<p class="lead">${product.short_description}</p>` : ''}
    <p class="price">${basePrice(product, base)}${period(product)}</p>
    ${
      product.variations.length === 0 && others.length > 0
        ? html`<p class="muted">In other currencies, at today’s rates:</p><ul class="currencies">${inCurrency(product.price_minor)}</ul>`
        : ''
    }
    ${addToCart(product, base, others, s.default_activation_limit)}
    ${startTrial(product)}
  </div>
</article>
${isPublicProduct(product) ? '' : licenseTermsCard(product, latest, s.default_activation_limit)}
${product.description ? html`<section class="card description"><h2>Description</h2>${paragraphs(product.description)}</section>` : ''}
${
  latest
    ? html`<section class="card release"><h2>Latest version: ${latest.version}</h2>
  <p class="muted">Released ${dayInWords(latest.release_date)}</p>
  ${latest.changelog ? html`<h3>What’s new</h3>${changelog(latest.changelog)}` : ''}
</section>`
    : ''
}`;
    return sendStorePage(reply, 200, store, product.name, body, {
      canonical: `${origin()}${productPath(product.slug)}`,
      description: product.short_description || undefined,
      maxAge: PAGE_MAX_AGE,
      script: true,
    });
  });
}
