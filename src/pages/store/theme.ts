/**
 * The store's look: one static stylesheet for the storefront's layout, and a tiny one per accent
 * colour whose URL names the colour (/store/theme-1d4ed8.css), so it is cached for a year and a
 * new colour is a new URL. Both are files of our origin: the pages' CSP allows no inline style.
 */

const channel = (hex: string, i: number) => Number.parseInt(hex.slice(i, i + 2), 16) / 255;
const linear = (c: number) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);

/** WCAG relative luminance of #rrggbb given without the '#'. */
function luminance(hex: string): number {
  return (
    0.2126 * linear(channel(hex, 0)) + 0.7152 * linear(channel(hex, 2)) + 0.0722 * linear(channel(hex, 4))
  );
}

const contrast = (a: number, b: number) => (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);

/** The colour darkened towards black by `f` (0..1). */
function darken(hex: string, f: number): string {
  return [0, 2, 4]
    .map((i) =>
      Math.round(Number.parseInt(hex.slice(i, i + 2), 16) * (1 - f))
        .toString(16)
        .padStart(2, '0'),
    )
    .join('');
}

/**
 * The accent's CSS variables: the colour itself for buttons with white or near-black text on it,
 * whichever reads better, and for links on white the accent darkened until it reaches the 4.5:1
 * contrast that axe asks of text, so any colour the owner picks stays readable.
 */
export function themeCss(hex: string): string {
  const l = luminance(hex);
  const ink = contrast(l, 1) >= contrast(l, luminance('111827')) ? '#fff' : '#111827';
  let link = hex;
  for (let f = 0.1; contrast(luminance(link), 1) < 4.5 && f <= 1; f += 0.1) link = darken(hex, f);
  return `:root { --accent: #${hex}; --accent-ink: ${ink}; --link: #${link}; }\n`;
}

export const THEME_PATH = /^theme-([0-9a-f]{6})\.css$/;
export const themeHref = (accent: string) => `/store/theme-${accent.slice(1).toLowerCase()}.css`;
export const STORE_STYLESHEET_PATH = '/store/assets/store.css';

/** The storefront's layout on top of the customer pages' stylesheet (src/pages/style.ts). */
export const STORE_STYLESHEET = `
a, button.link { color: var(--link, var(--accent)); }
.test-mode-banner { margin: 0; padding: .5rem 1rem; background: #fef3c7; color: #5c3a06;
  border-bottom: 2px solid #b45309; text-align: center; }
.store-top { display: flex; align-items: center; justify-content: space-between; gap: 1rem; flex-wrap: wrap;
  padding: .75rem 1.5rem; background: var(--card); border-bottom: 3px solid var(--accent); }
.store-brand { display: flex; align-items: center; gap: .6rem; font-weight: 700; font-size: 1.1rem;
  color: var(--ink); text-decoration: none; min-width: 0; overflow-wrap: anywhere; }
.store-brand img { height: 40px; width: auto; max-width: 160px; object-fit: contain; }
.store-nav { display: flex; gap: 1.25rem; align-items: center; }
.store-nav a { color: var(--ink); font-weight: 600; }
main.store { max-width: 72rem; }
.catalogue { list-style: none; margin: 1rem 0; padding: 0; display: grid; gap: 1.25rem;
  grid-template-columns: repeat(auto-fill, minmax(15rem, 1fr)); }
.catalogue li { background: var(--card); border: 1px solid var(--line); border-radius: 10px; overflow: hidden;
  display: flex; flex-direction: column; position: relative; }
.catalogue .thumb { aspect-ratio: 4 / 3; background: #eef1f5; display: block; width: 100%; height: auto;
  object-fit: contain; }
.catalogue .body { padding: 1rem 1.1rem 1.2rem; display: flex; flex-direction: column; gap: .35rem; flex: 1; }
.catalogue h2 { font-size: 1.1rem; margin: 0; overflow-wrap: anywhere; }
.catalogue h2 a { color: var(--ink); text-decoration: none; }
.catalogue h2 a::after { content: ""; position: absolute; inset: 0; }
.catalogue h2 a:focus-visible { outline: none; }
.catalogue li:focus-within { outline: 3px solid var(--accent); outline-offset: 2px; }
.catalogue .short { color: var(--muted); margin: 0; overflow-wrap: anywhere; }
.price { font-weight: 700; font-size: 1.05rem; margin-top: auto; }
.product { display: grid; gap: 2rem; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); align-items: start; }
.product .picture { width: 100%; height: auto; aspect-ratio: 4 / 3; object-fit: contain; background: var(--card);
  border: 1px solid var(--line); border-radius: 10px; }
.product h1 { font-size: 1.9rem; overflow-wrap: anywhere; }
.product .lead { color: var(--muted); overflow-wrap: anywhere; }
.product .price { font-size: 1.4rem; margin: .5rem 0 1rem; }
.description p { overflow-wrap: anywhere; }
.choices { border: 1px solid var(--line); border-radius: 10px; padding: .75rem 1rem 1rem; margin: 1rem 0;
  background: var(--card); }
/* The tiers side by side (docs/selling.md, 'Tiers'): each a card, its radio inside, the card its label. */
fieldset.tiers { min-width: 0; flex: 1 1 100%; margin: 0; }
fieldset.tiers legend { font-weight: 700; padding: 0 .25rem; }
.tier-grid { display: grid; gap: .75rem; grid-template-columns: repeat(auto-fit, minmax(9.5rem, 1fr)); margin-top: .5rem; }
.tier { position: relative; }
.add-to-cart .tier input { position: absolute; top: .95rem; left: .8rem; margin: 0; width: 1.1rem; height: 1.1rem; }
.tier label { display: flex; flex-direction: column; gap: .2rem; height: 100%; margin: 0; padding: .75rem .8rem .8rem 2.2rem;
  border: 1px solid var(--line); border-radius: 8px; cursor: pointer; font-weight: 400; overflow-wrap: anywhere; }
.tier input:checked + label { border-color: var(--accent); box-shadow: 0 0 0 1px var(--accent); }
.tier input:focus-visible + label { outline: 3px solid var(--accent); outline-offset: 2px; }
.tier .name { font-weight: 700; }
.tier .vprice { font-weight: 700; font-size: 1.1rem; }
.tier .term { font-size: .92rem; }
.tier .attrs { color: var(--muted); font-size: .88rem; }
.currencies { margin: .5rem 0 1rem; padding-left: 1.2rem; color: var(--muted); }
.release { margin-top: 1.5rem; }
.release ul { padding-left: 1.2rem; }
.pager { display: flex; justify-content: space-between; gap: 1rem; margin: 1.5rem 0; }
.store-foot { max-width: 72rem; margin: 2rem auto; padding: 1rem; color: var(--muted); font-size: .9rem;
  border-top: 1px solid var(--line); display: flex; gap: 1.5rem; flex-wrap: wrap; }
/* Buying: add to cart, the cart, checkout, receipt and pay pages (src/pages/store/checkout.ts). */
button[type=submit]:not(.secondary), a.button { background: var(--accent); border-color: var(--accent);
  color: var(--accent-ink); font-weight: 600; }
a.button { display: inline-block; padding: .6rem 1.2rem; border-radius: 6px; text-decoration: none; margin-top: .75rem; }
button:disabled { opacity: .6; cursor: not-allowed; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0);
  white-space: nowrap; }
.store-alert { background: #fdecea; color: var(--danger); border: 1px solid #f1c0bb; border-radius: 8px;
  padding: .6rem .9rem; margin: .75rem 0; }
.store-alert a { color: var(--danger); }
.field { margin: 0; min-width: 0; }
.field label { margin-top: .6rem; }
.field input, .field select, .add-to-cart select, .cart-page select, input.qty, #coupon_code {
  font: inherit; padding: .5rem .6rem; border: 1px solid #8a94a6; border-radius: 6px; background: #fff;
  color: var(--ink); max-width: 100%; }
.field input, .field select { width: 100%; }
.field-error { color: var(--danger); font-size: .9rem; margin: .25rem 0 0; }
[aria-invalid=true] { border-color: var(--danger) !important; }
select:focus, a:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
.add-to-cart { display: flex; flex-wrap: wrap; gap: .75rem; align-items: flex-end; margin: 1rem 0; }
.add-to-cart .field { flex: 1 1 12rem; }
.add-to-cart input { width: 6rem; }
.add-to-cart button { padding: .6rem 1.4rem; }
.start-trial { margin: 1.5rem 0 1rem; }
.start-trial h2 { margin-bottom: .25rem; }
.start-trial button { margin-top: .5rem; }
.license-key { overflow-wrap: anywhere; }
.currency-switch { display: flex; gap: .6rem; align-items: center; justify-content: flex-end; margin-bottom: .75rem; }
.currency-switch label { margin: 0; }
.table-scroll { overflow-x: auto; }
table.lines { min-width: 100%; }
table.lines .num, .summary-lines .num { text-align: right; white-space: nowrap; }
table.lines td:first-child { overflow-wrap: anywhere; }
.qty-row { display: flex; gap: .4rem; align-items: center; flex-wrap: wrap; }
.tier-row { display: flex; gap: .4rem; align-items: center; flex-wrap: wrap; margin-top: .35rem; font-weight: 400;
  font-size: .95rem; }
.tier-select { max-width: 100%; }
input.qty { width: 5rem; }
button.secondary { padding: .45rem .8rem; }
.cart-foot { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 1.5rem; margin-top: 1rem; }
.coupons { list-style: none; padding: 0; margin: .5rem 0; }
.coupons li { display: flex; gap: .5rem; align-items: baseline; flex-wrap: wrap; }
dl.totals { display: grid; grid-template-columns: 1fr auto; gap: .3rem 0; margin: .5rem 0; }
dl.totals dd { margin: 0; text-align: right; padding-left: 1rem; }
dl.totals .grand { font-weight: 700; font-size: 1.1rem; border-top: 1px solid var(--line); padding-top: .4rem; }
.checkout { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 1.25rem; align-items: start; }
.checkout fieldset { margin: 0 0 1.25rem; min-width: 0; }
.checkout legend { font-weight: 700; font-size: 1.1rem; padding: 0 .3rem; }
.fields { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 0 1rem; }
.fields .wide { grid-column: 1 / -1; }
.req { color: var(--danger); }
.radio { display: flex; gap: .5rem; align-items: center; margin: .4rem 0; }
.radio label { margin: 0; font-weight: 400; }
.radio input { width: 1.1rem; height: 1.1rem; }
.hint { margin: .25rem 0 0; }
.summary h2 { font-size: 1.1rem; }
.summary-lines { list-style: none; padding: 0; margin: .5rem 0; }
.summary-lines li { display: flex; justify-content: space-between; gap: 1rem; padding: .3rem 0;
  border-bottom: 1px solid var(--line); overflow-wrap: anywhere; }
.summary button[type=submit] { width: 100%; margin-top: 1rem; padding: .7rem; }
.terms { font-size: .9rem; }
.keys { list-style: none; padding: 0; margin: .75rem 0; display: grid; gap: .75rem; }
.keys li { border: 1px solid var(--line); border-radius: 8px; padding: .6rem .8rem; display: grid; gap: .2rem; }
.keys .product { font-weight: 600; overflow-wrap: anywhere; }
.license-key { font-size: 1rem; overflow-wrap: anywhere; user-select: all; }
/* A gateway's payment instructions keep the owner's line breaks (an IBAN on its own line). */
.instructions { white-space: pre-line; overflow-wrap: anywhere; }
@media (max-width: 720px) {
  .product { grid-template-columns: minmax(0, 1fr); gap: 1rem; }
  .checkout, .cart-foot, .fields { grid-template-columns: minmax(0, 1fr); }
  .card { padding: 1rem; }
  .store-top { padding: .6rem 1rem; }
}
/* A narrow screen stacks each cart line: its name, then one labelled row per figure. */
@media (max-width: 560px) {
  table.cart-lines thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  table.cart-lines, table.cart-lines tbody, table.cart-lines tr, table.cart-lines td { display: block; }
  table.cart-lines tr { border-bottom: 1px solid var(--line); padding: .5rem 0; }
  table.cart-lines td { border: 0; padding: .3rem 0; display: flex; justify-content: space-between;
    align-items: center; gap: 1rem; text-align: right; }
  table.cart-lines td::before { content: attr(data-label); font-weight: 600; text-align: left; }
  table.cart-lines td.line-name { font-weight: 600; font-size: 1.05rem; justify-content: flex-start; text-align: left;
    flex-direction: column; align-items: flex-start; }
  table.cart-lines td.line-name::before, table.cart-lines td.line-remove::before { content: none; }
  table.cart-lines td.line-remove { justify-content: flex-end; }
}
`;

/** Shown where a product has no image (an SVG of our own: no script, no external reference). */
export const PLACEHOLDER_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="400" height="300" viewBox="0 0 400 300">
<rect width="400" height="300" fill="#eef1f5"/>
<path d="M150 200l40-50 30 35 20-22 40 37z" fill="#c9d0da"/>
<circle cx="250" cy="110" r="16" fill="#c9d0da"/>
</svg>
`;
