/**
 * The store's one script (docs/storefront.md, 'Buying'): the product page's "Add to cart", the
 * cart, checkout and pay pages, driven through the public /v1 cart and checkout APIs
 * (docs/cart.md, docs/checkout.md). No framework: the pages' CSP allows no inline script or
 * handler, so this file finds its page by `data-store-page` and binds its listeners itself. Every
 * element is made with createElement and textContent: nothing from the API is ever parsed as markup.
 *
 * A browser file, typechecked by its own tsconfig.json (DOM, no Node.js). The server serves the
 * JavaScript that scripts/store-script.ts compiles from it into store.generated.ts, inside a
 * function so that nothing reaches the page's global scope (docs/development.md).
 */

/** What the cart API answers (docs/cart.md). */
interface Cart {
  currency: string;
  currency_symbol: string;
  decimals: number;
  items: CartItem[];
  coupons: { code: string; discount_total: string }[];
  subtotal: string;
  discount_total: string;
  total_tax: string;
  total: string;
  needs_shipping: boolean;
}
interface CartItem {
  key: string;
  product_id: number;
  variation_id: number;
  quantity: number;
  name: string;
  price: string;
  subtotal: number;
  total: number;
  permalink: string;
  subscription: boolean;
  /** A variable product's tiers (docs/selling.md, 'Tiers'); empty for a simple product. */
  tiers?: { variation_id: number; name: string; price: string }[];
}
/** GET /v1/checkout/bootstrap (docs/checkout.md): the form's fields and the places they take. */
interface Bootstrap {
  nonce: string;
  fields: CheckoutField[];
  countries: { code: string; name: string }[];
  states: Record<string, Record<string, string>>;
  default_country: string;
  requires_shipping: boolean;
}
interface CheckoutField {
  key: string;
  label: string;
  type: string;
  fieldset: string;
  required: boolean;
  hidden: boolean;
  priority: number;
}
interface ShippingRate {
  id: string;
  label: string;
  cost: string;
}
/** What a refusal carries: the REST error's code and data, or checkout's error_code. */
interface Failure {
  ok?: boolean;
  code?: string;
  error_code?: string;
  status?: string;
  data?: FailureData;
  order_id?: number;
  order_key?: string;
}
interface FailureData {
  reason?: string;
  max_quantity?: number;
  params?: Record<string, unknown>;
}
/** An answer: its body is read as T only once `failed` has said it is not a refusal. */
interface Answer<T> {
  status: number;
  body: T & Failure;
  code: string;
}

/** Stripe.js as this script uses it (https://js.stripe.com/v3, loaded by the page as #stripe-js). */
interface StripeElements {
  submit(): Promise<{ error?: unknown }>;
  create(type: 'payment'): { mount(selector: string): void };
}
interface StripeJs {
  elements(options: { mode: 'payment'; amount: number; currency: string }): StripeElements;
  confirmPayment(options: {
    elements: StripeElements;
    clientSecret: string;
    confirmParams: { return_url: string };
    redirect: 'if_required';
  }): Promise<{ error?: unknown } | undefined>;
}
interface StripeHandle {
  stripe: StripeJs | null;
  elements: StripeElements | null;
}
interface StripeNext {
  gateway: string;
  client_secret: string;
}
declare global {
  interface Window {
    Stripe?: (publishableKey: string | null) => StripeJs;
  }
}

/** A form control found by id or name: the script reads and sets its value. */
type Control = HTMLInputElement | HTMLSelectElement;

const API = '/v1';
let nonce = '';

/* Clear words for every code the cart and checkout APIs answer (docs/cart.md, docs/checkout.md). */
const WORDS: Record<string, string> = {
  invalid_product: 'This product is no longer for sale.',
  invalid_variation: 'Please choose one of the options of this product.',
  variation_not_available: 'This option is out of stock.',
  add_to_cart_failed: 'This could not be added to your cart.',
  update_failed: 'The quantity could not be changed.',
  item_not_found: 'This line is no longer in your cart.',
  remove_failed: 'The line could not be removed. Please try again.',
  coupon_code_required: 'Please enter a coupon code.',
  coupons_disabled: 'This store does not take coupons at the moment.',
  cart_error: 'Your cart could not be opened. Please try again in a moment.',
  empty_cart: 'Add something to your cart before applying a coupon.',
  coupon_currency_mismatch: 'This coupon is for another currency. Switch the currency to use it.',
  coupon_failed: 'This coupon cannot be used.',
  coupon_not_found: 'There is no coupon with this code.',
  coupon_not_applied: 'This coupon is not applied to your cart.',
  remove_coupon_failed: 'The coupon could not be removed. Please try again.',
  invalid_currency: 'This currency is not offered by the store.',
  rest_cookie_invalid_nonce: 'Your session has expired. Reload the page and try again.',
  rest_invalid_json: 'The request was malformed. Reload the page and try again.',
  rest_unsupported_media_type: 'The request was malformed. Reload the page and try again.',
  rest_missing_param: 'Something required was missing. Check the form and try again.',
  rest_invalid_param: 'A value is not valid. Check the form and try again.',
  invalid_parameters: 'The request was malformed. Reload the page and try again.',
  no_items: 'Your cart is empty.',
  rate_limited: 'Too many order attempts. Please wait a few minutes and try again.',
  captcha_missing: 'Please complete the check that you are not a robot.',
  login_required: 'Please sign in to buy a subscription.',
  currency_rate_stale:
    'The exchange rate of this currency is out of date. Choose another currency, or try again later.',
  currency_gateway_mismatch: 'This payment method does not take this currency. Choose another one.',
  invalid_payment_method: 'Please choose a payment method.',
  out_of_stock: 'Something in your order has just sold out.',
  order_currency_failed: 'The exchange rate changed while your order was placed. Please try again.',
  order_failed: 'Your order could not be processed. Nothing was charged.',
  order_not_found: 'This order does not exist.',
  unauthorized: 'This payment link is not valid.',
  order_already_paid: 'This order has already been paid.',
  order_cancelled: 'This order was cancelled and cannot be paid.',
  renewal_window_expired: 'The time to pay this renewal has passed.',
  gateway_mismatch: 'This order must be paid with the payment method it was placed with.',
  gateway_unavailable: 'This payment method is not available. Choose another one.',
  payment_declined: 'Your card was declined. Nothing was charged. Try another card.',
  invalid_vat_number:
    'This VAT number is not valid. Check it (with its country prefix, e.g. FR40303265045), or leave it empty to buy with VAT.',
  tax_country_unconfirmed:
    'Your billing country differs from the country you appear to be in. Please confirm your country below, then place the order again.',
  invalid_card_number: 'This is not a valid card number. Check it and try again.',
  stripe_incomplete: 'Check your card details.',
  stripe_unavailable: 'The card payment could not be started. Nothing was charged. Please try again.',
  required: 'This field is required.',
  required_fields: 'Please fill in the fields marked below.',
  invalid_email: 'Enter an email address such as name@example.com.',
  invalid_quantity: 'Enter a quantity from 1 to 9999.',
  trial_already_used: 'This email or site has already had a trial of this product.',
  trial_not_offered: 'This product offers no trial.',
  network_error: 'The store could not be reached. Check your connection and try again.',
  quote_failed: 'Your order could not be priced.',
};
const REASONS: Record<string, string> = {
  stock_limit: 'Not that many are in stock.',
  out_of_stock: 'This product is out of stock.',
  choose_options: 'Please choose one of the options.',
  invalid_attributes: 'Please choose one of the options.',
  quantity_limit: 'A line holds at most 9999.',
  cart_full: 'Your cart is full (100 lines).',
  invalid_key: 'This line is no longer in your cart.',
  not_purchasable: 'This product is no longer for sale.',
  not_found: 'There is no coupon with this code.',
  already_applied: 'This coupon is already applied.',
  too_many_coupons: 'No more coupons can be added.',
  expired: 'This coupon has expired.',
  usage_limit_reached: 'This coupon has been used up.',
  usage_limit_per_user_reached: 'You have already used this coupon.',
  minimum_amount: "Your cart is below this coupon's minimum spend.",
  maximum_amount: "Your cart is above this coupon's maximum spend.",
  not_applicable: 'This coupon does not apply to what is in your cart.',
  individual_use: 'This coupon cannot be combined with the one already applied.',
};

function wordsFor(code: string, data?: FailureData): string {
  let text = WORDS[code] || 'Something went wrong. Please try again.';
  if (data?.reason && REASONS[data.reason]) {
    text = `${text} ${REASONS[data.reason]}`;
    if (data.reason === 'stock_limit' && typeof data.max_quantity === 'number') {
      text = `${text} At most ${data.max_quantity} can be in your cart.`;
    }
  }
  return text;
}

/** An element's attributes: `text` is its textContent, `className` its class; null, undefined and false are left out. */
type Props = Record<string, string | number | boolean | null | undefined>;
type Child = Node | string | null | undefined | false;

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props?: Props,
  children?: Child[],
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (props) {
    for (const k of Object.keys(props)) {
      const v = props[k];
      if (v === null || v === undefined || v === false) continue;
      if (k === 'text') node.textContent = String(v);
      else if (k === 'className') node.className = String(v);
      else node.setAttribute(k, v === true ? '' : String(v));
    }
  }
  for (const c of children || []) {
    if (c === null || c === undefined || c === false) continue;
    node.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
  }
  return node;
}
/** The element with this id, as the type the page renders it with. */
function byId<T extends HTMLElement = HTMLElement>(id: string): T | null {
  return document.getElementById(id) as T | null;
}
function clear(node: Node): void {
  while (node.firstChild) node.removeChild(node.firstChild);
}

/* The page's alert region: the words, with the code in data-code for support and tests. */
function showError(code: string, data?: FailureData, extra?: Node | null): void {
  const box = byId('store-alert');
  if (!box) return;
  clear(box);
  box.setAttribute('data-code', code);
  box.appendChild(el('p', { text: wordsFor(code === 'required' ? 'required_fields' : code, data) }));
  if (extra) box.appendChild(extra);
  box.hidden = false;
  box.focus();
}
function clearError(): void {
  const box = byId('store-alert');
  if (!box) return;
  clear(box);
  box.removeAttribute('data-code');
  box.hidden = true;
}

/* A call to the API: {status, body, code}. The code is the REST error's code or checkout's error_code. */
function call<T>(
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
): Promise<Answer<T>> {
  const h: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) h['content-type'] = 'application/json';
  if (nonce && method !== 'GET') h['x-rest-nonce'] = nonce;
  for (const [k, v] of Object.entries(headers || {})) h[k] = v;
  return fetch(API + path, {
    method: method,
    credentials: 'same-origin',
    headers: h,
    body: body === undefined ? undefined : JSON.stringify(body),
  }).then(
    (res) =>
      res
        .json()
        .catch(() => ({}))
        .then((json: (T & Failure) | null) => {
          let code = '';
          if (res.status >= 400 || json?.ok === false) {
            code =
              json?.code ||
              json?.error_code ||
              (json && json.status === 'failed' ? 'order_failed' : 'network_error');
          }
          return { status: res.status, body: json || ({} as T & Failure), code: code };
        }),
    () => ({ status: 0, body: {} as T & Failure, code: 'network_error' }),
  );
}
function failed(res: Answer<unknown>): boolean {
  if (!res.code) return false;
  showError(res.code, res.body?.data);
  return true;
}
function busy(button: HTMLButtonElement | null, on: boolean): void {
  if (button) {
    button.disabled = on;
    button.setAttribute('aria-busy', on ? 'true' : 'false');
  }
}
/** A form's control by name (form.elements.name), or null when the form has none. */
function control(form: HTMLFormElement, name: string): Control | null {
  return form.elements.namedItem(name) as Control | null;
}

/* ---- product page: Add to cart ---- */
function productPage(form: HTMLFormElement): void {
  const button = form.querySelector<HTMLButtonElement>('button[type=submit]')!;
  button.disabled = false;
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    clearError();
    const qty = Number(control(form, 'quantity')!.value);
    if (!Number.isInteger(qty) || qty < 1 || qty > 9999) {
      showError('invalid_quantity');
      return;
    }
    const body: { product_id: number; quantity: number; variation_id?: number } = {
      product_id: Number(form.getAttribute('data-product')),
      quantity: qty,
    };
    const variation = control(form, 'variation_id');
    if (variation) body.variation_id = Number(variation.value);
    busy(button, true);
    call('POST', '/cart/add', body).then((res) => {
      busy(button, false);
      if (!failed(res)) window.location.assign('/cart');
    });
  });
}

/* ---- product page: Start a free trial ---- */
function trialForm(form: HTMLFormElement): void {
  const button = form.querySelector<HTMLButtonElement>('button[type=submit]')!;
  button.disabled = false;
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    clearError();
    const email = control(form, 'email') as HTMLInputElement;
    if (!email.value || !email.checkValidity()) {
      showError('invalid_email');
      email.focus();
      return;
    }
    busy(button, true);
    call<{ license_key: string; usage_expires_at: string }>('POST', '/trials', {
      product_id: Number(form.getAttribute('data-product')),
      email: email.value.trim(),
    }).then((res) => {
      busy(button, false);
      if (failed(res)) return;
      const box = byId('trial-result')!;
      clear(box);
      const until = new Date(res.body.usage_expires_at).toUTCString().replace(/ GMT$/, ' UTC');
      box.appendChild(el('p', { text: 'Your trial has started. Your license key:' }));
      box.appendChild(el('p', {}, [el('code', { className: 'license-key', text: res.body.license_key })]));
      box.appendChild(el('p', { text: `It works until ${until}. Enter it in the plugin's settings.` }));
      box.hidden = false;
      form.hidden = true;
    });
  });
}

/* ---- cart ---- */
let currentCart: Cart | null = null;
function money(cart: Cart, value: string | number): string {
  return cart.currency_symbol + value;
}
function renderCart(cart: Cart): void {
  currentCart = cart;
  const view = byId('cart-view')!;
  view.setAttribute('aria-busy', 'false');
  clear(view);
  const select = byId<HTMLSelectElement>('currency');
  if (select) select.value = cart.currency;
  if (!cart.items.length) {
    view.appendChild(el('p', { text: 'Your cart is empty.' }));
    view.appendChild(el('p', {}, [el('a', { href: '/', text: 'See all products' })]));
    return;
  }
  const rows = cart.items.map((item) => {
    const qtyId = `qty-${item.key}`;
    const qty = el('input', {
      id: qtyId,
      type: 'number',
      min: '1',
      max: '9999',
      value: item.quantity,
      inputmode: 'numeric',
      className: 'qty',
    });
    const update = el('button', { type: 'button', className: 'secondary', text: 'Update' });
    update.addEventListener('click', () => {
      const n = Number(qty.value);
      if (!Number.isInteger(n) || n < 0 || n > 9999) {
        showError('invalid_quantity');
        qty.focus();
        return;
      }
      cartCall('/cart/update', { cart_item_key: item.key, quantity: n }, update);
    });
    const remove = el('button', {
      type: 'button',
      className: 'link',
      text: 'Remove',
      'aria-label': `Remove ${item.name}`,
    });
    remove.addEventListener('click', () => {
      cartCall('/cart/remove', { cart_item_key: item.key }, remove);
    });
    const name = item.permalink
      ? el('a', { href: item.permalink.replace(/^https?:[/][/][^/]+/, ''), text: item.name })
      : el('span', { text: item.name });
    const nameCell: Child[] = [name];
    // Another tier of the same product, chosen here rather than removed and added again.
    const tiers = item.tiers || [];
    if (tiers.length > 1) {
      const tierId = `tier-${item.key}`;
      const choice = el(
        'select',
        { id: tierId, className: 'tier-select' },
        tiers.map((tier) =>
          el('option', {
            value: String(tier.variation_id),
            selected: tier.variation_id === item.variation_id,
            text: `${tier.name} – ${money(cart, tier.price)}`,
          }),
        ),
      );
      const change = el('button', { type: 'button', className: 'secondary', text: 'Change tier' });
      change.addEventListener('click', () => {
        const id = Number(choice.value);
        if (id === item.variation_id) return;
        cartCall(
          '/cart/update',
          { cart_item_key: item.key, quantity: item.quantity, variation_id: id },
          change,
        );
      });
      nameCell.push(
        el('span', { className: 'tier-row' }, [
          el('label', { for: tierId, className: 'visually-hidden', text: `Tier of ${item.name}` }),
          choice,
          change,
        ]),
      );
    }
    // data-label names each cell where a narrow screen stacks the line (the header row is hidden there).
    return el('tr', {}, [
      el('td', { className: 'line-name' }, nameCell),
      el('td', { className: 'num', 'data-label': 'Price' }, [money(cart, item.price)]),
      el('td', { 'data-label': 'Quantity' }, [
        el('label', { for: qtyId, className: 'visually-hidden', text: `Quantity of ${item.name}` }),
        el('span', { className: 'qty-row' }, [qty, update]),
      ]),
      el('td', { className: 'num', 'data-label': 'Subtotal' }, [
        money(cart, Number(item.subtotal).toFixed(cart.decimals)),
      ]),
      el('td', { className: 'line-remove' }, [remove]),
    ]);
  });
  view.appendChild(
    el('div', { className: 'table-scroll', role: 'region', 'aria-label': 'Cart lines', tabindex: '0' }, [
      el('table', { className: 'lines cart-lines' }, [
        el('thead', {}, [
          el('tr', {}, [
            el('th', { scope: 'col', text: 'Product' }),
            el('th', { scope: 'col', className: 'num', text: 'Price' }),
            el('th', { scope: 'col', text: 'Quantity' }),
            el('th', { scope: 'col', className: 'num', text: 'Subtotal' }),
            el('th', { scope: 'col' }, [el('span', { className: 'visually-hidden', text: 'Remove' })]),
          ]),
        ]),
        el('tbody', {}, rows),
      ]),
    ]),
  );

  // Coupons: the applied ones with a remove button, and a form to add one.
  const couponInput = el('input', {
    id: 'coupon_code',
    name: 'coupon_code',
    maxlength: '100',
    autocomplete: 'off',
  });
  const apply = el('button', { type: 'submit', className: 'secondary', text: 'Apply coupon' });
  const couponForm = el('form', { className: 'coupon-form', novalidate: true }, [
    el('label', { for: 'coupon_code', text: 'Coupon code' }),
    el('span', { className: 'qty-row' }, [couponInput, apply]),
  ]);
  couponForm.addEventListener('submit', (event) => {
    event.preventDefault();
    cartCall('/cart/apply-coupon', { coupon_code: couponInput.value }, apply);
  });
  const applied = cart.coupons.map((c) => {
    const rm = el('button', {
      type: 'button',
      className: 'link',
      text: 'Remove',
      'aria-label': `Remove coupon ${c.code}`,
    });
    rm.addEventListener('click', () => {
      cartCall('/cart/remove-coupon', { coupon_code: c.code }, rm);
    });
    return el('li', {}, [el('code', { text: c.code }), ` −${money(cart, c.discount_total)} `, rm]);
  });

  const totals = el('dl', { className: 'totals' }, [
    el('dt', { text: 'Subtotal' }),
    el('dd', { text: money(cart, cart.subtotal) }),
    Number(cart.discount_total) > 0 ? el('dt', { text: 'Discount' }) : null,
    Number(cart.discount_total) > 0 ? el('dd', { text: `−${money(cart, cart.discount_total)}` }) : null,
    Number(cart.total_tax) > 0 ? el('dt', { text: 'Tax' }) : null,
    Number(cart.total_tax) > 0 ? el('dd', { text: money(cart, cart.total_tax) }) : null,
    el('dt', { className: 'grand', text: 'Total' }),
    el('dd', { className: 'grand', id: 'cart-total' }, [
      `${money(cart, cart.total)} `,
      el('span', { className: 'muted', text: cart.currency }),
    ]),
  ]);
  view.appendChild(
    el('div', { className: 'cart-foot' }, [
      el('div', {}, [
        couponForm,
        applied.length ? el('ul', { className: 'coupons', 'aria-label': 'Applied coupons' }, applied) : null,
      ]),
      el('div', {}, [
        totals,
        cart.needs_shipping
          ? el('p', { className: 'muted', text: 'Shipping and taxes are worked out at checkout.' })
          : null,
        el('a', { href: '/checkout', className: 'button', text: 'Proceed to checkout' }),
      ]),
    ]),
  );
}
function cartCall(path: string, body: unknown, button: HTMLButtonElement): Promise<void> {
  clearError();
  busy(button, true);
  return call<{ cart: Cart }>('POST', path, body).then((res) => {
    busy(button, false);
    if (failed(res)) return;
    renderCart(res.body.cart);
  });
}
function cartPage(): void {
  const select = byId<HTMLSelectElement>('currency');
  if (select) {
    select.addEventListener('change', () => {
      clearError();
      call<Cart>('GET', `/cart?currency=${encodeURIComponent(select.value)}`).then((res) => {
        if (failed(res)) {
          if (currentCart) select.value = currentCart.currency;
          return;
        }
        renderCart(res.body);
      });
    });
  }
  call<Cart>('GET', '/cart').then((res) => {
    if (!failed(res)) renderCart(res.body);
  });
}

/* ---- checkout ---- */
const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;
/* The test card's number as the server checks it (wellFormedCardNumber, src/modules/orders/gateways.ts):
   12 to 19 digits, spaces and dashes between them allowed, with a valid Luhn checksum. */
function cardNumberCode(value: string): string {
  const digits = value.replace(/[\s-]/g, '');
  if (digits === '') return 'required';
  if (!/^[0-9]{12,19}$/.test(digits)) return 'invalid_card_number';
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0 ? '' : 'invalid_card_number';
}
/** The test card's number field: the checkout and pay pages render it with this id. */
function cardNumber(): HTMLInputElement {
  return byId<HTMLInputElement>('card_number')!;
}
/* A refusal of the card number by the server, shown at its field; true when it was one. */
function cardFieldError(code: string): boolean {
  if (code !== 'invalid_card_number') return false;
  setFieldError('card_number', code);
  cardNumber().focus();
  return true;
}
const AUTOCOMPLETE: Record<string, string> = {
  billing_email: 'email',
  billing_first_name: 'given-name',
  billing_last_name: 'family-name',
  billing_phone: 'tel',
};
function fieldInput(f: CheckoutField, boot: Bootstrap): Control {
  const attrs: Props = { id: f.key, name: f.key, 'aria-describedby': `${f.key}-error` };
  if (f.required) attrs['aria-required'] = 'true';
  if (f.type === 'country') {
    const select = el(
      'select',
      attrs,
      [el('option', { value: '', text: 'Choose…' })].concat(
        boot.countries.map((c) => el('option', { value: c.code, text: c.name })),
      ),
    );
    select.value = boot.default_country || '';
    return select;
  }
  if (f.type === 'state') return el('input', attrs);
  attrs.type = f.type === 'email' ? 'email' : f.type === 'tel' ? 'tel' : 'text';
  attrs.autocomplete = AUTOCOMPLETE[f.key] || 'on';
  attrs.maxlength = '200';
  return el('input', attrs);
}
/* A state field is a list when the country has states, a text box otherwise. */
function syncState(prefix: string, boot: Bootstrap): void {
  const country = byId<HTMLSelectElement>(`${prefix}_country`);
  const state = byId<Control>(`${prefix}_state`);
  if (!country || !state) return;
  const states = boot.states[country.value];
  // undefined for a country without a list of states: never equal to the test below, so its text
  // box is made anew on each change of country, as it always has been.
  const wantSelect = states && Object.keys(states).length > 0;
  if (wantSelect === (state.tagName === 'SELECT')) return;
  const attrs: Props = { id: state.id, name: state.name, 'aria-describedby': `${state.id}-error` };
  const next = wantSelect
    ? el(
        'select',
        attrs,
        [el('option', { value: '', text: 'Choose…' })].concat(
          Object.keys(states).map((code) => el('option', { value: code, text: states[code] })),
        ),
      )
    : el('input', attrs);
  state.parentNode!.replaceChild(next, state);
}
function renderFields(container: HTMLElement, fields: CheckoutField[], boot: Bootstrap): void {
  clear(container);
  for (const f of fields) {
    if (f.hidden) continue;
    const wide = f.key.indexOf('first_name') < 0 && f.key.indexOf('last_name') < 0;
    container.appendChild(
      el('div', { className: `field${wide ? ' wide' : ''}` }, [
        el('label', { for: f.key }, [
          f.label,
          f.required ? el('span', { className: 'req', 'aria-hidden': 'true', text: ' *' }) : null,
        ]),
        fieldInput(f, boot),
        el('p', { className: 'field-error', id: `${f.key}-error`, hidden: true }),
      ]),
    );
  }
}
function setFieldError(id: string, code: string): void {
  const input = byId(id);
  const err = byId(`${id}-error`);
  if (!input || !err) return;
  if (code) {
    input.setAttribute('aria-invalid', 'true');
    err.setAttribute('data-code', code);
    err.textContent = wordsFor(code);
    err.hidden = false;
  } else {
    input.removeAttribute('aria-invalid');
    err.removeAttribute('data-code');
    err.textContent = '';
    err.hidden = true;
  }
}
function address(fields: CheckoutField[], prefix: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of fields) {
    if (f.fieldset !== prefix) continue;
    const input = byId<Control>(f.key);
    if (input && input.value.trim() !== '') out[f.key.slice(prefix.length + 1)] = input.value.trim();
  }
  return out;
}
/**
 * The summary's tax and total for the buyer's country, priced by POST /v1/checkout/quote (shown
 * where the store charges the buyer's country's VAT; docs/taxes.md). Null: the cart's own.
 */
interface QuotedTax {
  tax: string;
  total: string;
  /** A business buyer's VAT number VIES confirmed, of another member state: no VAT. */
  reverseCharge: boolean;
}
function summarize(cart: Cart, quoted: QuotedTax | null = null): void {
  const box = byId('order-summary')!;
  clear(box);
  box.appendChild(
    el(
      'ul',
      { className: 'summary-lines' },
      cart.items.map((i) =>
        el('li', {}, [
          el('span', { text: `${i.name} × ${i.quantity}` }),
          el('span', { className: 'num', text: money(cart, Number(i.total).toFixed(cart.decimals)) }),
        ]),
      ),
    ),
  );
  const parts = [el('dt', { text: 'Subtotal' }), el('dd', { text: money(cart, cart.subtotal) })];
  if (Number(cart.discount_total) > 0) {
    parts.push(el('dt', { text: `Discount (${cart.coupons.map((c) => c.code).join(', ')})` }));
    parts.push(el('dd', { text: `−${money(cart, cart.discount_total)}` }));
  }
  if (quoted) {
    parts.push(el('dt', { text: quoted.reverseCharge ? 'VAT (reverse charge)' : 'VAT' }));
    parts.push(el('dd', { id: 'checkout-tax', text: money(cart, quoted.tax) }));
  }
  parts.push(el('dt', { className: 'grand', text: 'Total' }));
  parts.push(
    el('dd', { className: 'grand', id: 'checkout-total' }, [
      `${money(cart, quoted ? quoted.total : cart.total)} `,
      el('span', { className: 'muted', text: cart.currency }),
    ]),
  );
  box.appendChild(el('dl', { className: 'totals' }, parts));
  if (cart.needs_shipping) {
    box.appendChild(el('p', { className: 'muted', text: 'Plus shipping and any tax for your address.' }));
  }
}
function selectedGateway(form: HTMLFormElement): string {
  const checked = form.querySelector<HTMLInputElement>('input[name=payment_method]:checked');
  return checked ? checked.value : '';
}
function syncCardField(form: HTMLFormElement): void {
  const card = byId('card-field');
  if (card) card.hidden = selectedGateway(form) !== 'test_card';
  const stripe = byId('stripe-field');
  if (stripe) stripe.hidden = selectedGateway(form) !== 'stripe';
}
function paymentData(form: HTMLFormElement): { save_card: boolean } | { card_number: string } | undefined {
  if (selectedGateway(form) === 'stripe') {
    const save = byId<HTMLInputElement>('stripe_save_card');
    return { save_card: !!(save?.checked && !byId('stripe-save')!.hidden) };
  }
  if (selectedGateway(form) !== 'test_card') return undefined;
  return { card_number: cardNumber().value.replace(/[\s-]/g, '') };
}
function receiptUrl(id: number | string, key: string): string {
  return `/checkout/order-received/${id}?key=${encodeURIComponent(key)}`;
}
function payUrl(id: number | string, key: string): string {
  return `/checkout/pay/${id}?key=${encodeURIComponent(key)}`;
}

/* ---- Stripe: the Payment Element, on pages that load Stripe.js (the gateway is on) ---- */
/* Mounts the Payment Element for an amount in minor units of a currency, once Stripe.js has loaded. */
function mountStripe(amount: number, currency: string): StripeHandle | null {
  const box = byId('stripe-field');
  if (!box) return null;
  const handle: StripeHandle = { stripe: null, elements: null };
  function mount(): void {
    if (!window.Stripe || handle.stripe) return;
    handle.stripe = window.Stripe(box!.getAttribute('data-publishable-key'));
    handle.elements = handle.stripe.elements({
      mode: 'payment',
      amount: amount,
      currency: currency.toLowerCase(),
    });
    handle.elements.create('payment').mount('#payment-element');
  }
  if (window.Stripe) mount();
  else byId('stripe-js')!.addEventListener('load', mount);
  return handle;
}
function minorUnits(total: string, decimals: number): number {
  return Math.round(Number(total) * 10 ** decimals);
}
/* Stripe checks the card fields before anything is placed or paid: {error} when they are incomplete. */
function stripeReady(form: HTMLFormElement, stripe: StripeHandle | null): Promise<{ code?: string }> {
  if (selectedGateway(form) !== 'stripe') return Promise.resolve({});
  if (!stripe?.elements) return Promise.resolve({ code: 'gateway_unavailable' });
  return stripe.elements.submit().then((r) => (r?.error ? { code: 'stripe_incomplete' } : {}));
}
/** The way back to paying an order that was placed but not paid. */
function payAgain(id: number | string, key: string): HTMLParagraphElement {
  return el('p', {}, [
    el('a', { href: payUrl(id, key), text: 'Pay for this order with another card or method' }),
  ]);
}
/* Confirms the order's PaymentIntent in the page: 3-D Secure and other steps run in Stripe's own frames. */
function confirmStripe(
  stripe: StripeHandle,
  next: StripeNext,
  id: number | string,
  key: string,
  button: HTMLButtonElement | null,
): Promise<void> {
  return stripe
    .stripe!.confirmPayment({
      elements: stripe.elements!,
      clientSecret: next.client_secret,
      confirmParams: { return_url: window.location.origin + receiptUrl(id, key) },
      redirect: 'if_required',
    })
    .then((result) => {
      busy(button, false);
      if (result?.error) {
        showError('payment_declined', undefined, payAgain(id, key));
        return;
      }
      window.location.assign(receiptUrl(id, key));
    });
}
function pay(
  form: HTMLFormElement,
  id: number | string,
  key: string,
  button: HTMLButtonElement | null,
  stripe: StripeHandle | null,
): Promise<void> {
  return call<{ next?: StripeNext }>('POST', `/checkout/pay-order/${id}`, {
    key: key,
    payment_method: selectedGateway(form),
    payment_data: paymentData(form),
  }).then((res) => {
    if (res.code) {
      busy(button, false);
      showError(res.code, res.body.data, payAgain(id, key));
      cardFieldError(res.code);
      return;
    }
    const next = res.body.next;
    if (next && next.gateway === 'stripe' && stripe?.stripe) {
      return confirmStripe(stripe, next, id, key, button);
    }
    busy(button, false);
    window.location.assign(receiptUrl(id, key));
  });
}
function checkoutPage(form: HTMLFormElement): void {
  let boot: Bootstrap | null = null;
  let cart: Cart | null = null;
  let stripe: StripeHandle | null = null;
  let fields: CheckoutField[] = [];
  // randomUUID exists only in secure contexts (HTTPS or localhost).
  const idempotency =
    typeof window.crypto?.randomUUID === 'function'
      ? crypto.randomUUID()
      : String(Date.now()) + Math.random();
  Promise.all([call<Bootstrap>('GET', '/checkout/bootstrap'), call<Cart>('GET', '/cart')]).then((all) => {
    if (failed(all[0]) || failed(all[1])) return;
    const loaded = all[0].body;
    const current = all[1].body;
    boot = loaded;
    cart = current;
    nonce = loaded.nonce || '';
    if (!current.items.length) {
      const main = form.parentNode!;
      main.insertBefore(
        el('section', { className: 'card' }, [
          el('p', { text: 'Your cart is empty.' }),
          el('p', {}, [el('a', { href: '/', text: 'See all products' })]),
        ]),
        form,
      );
      return;
    }
    fields = loaded.fields.slice().sort((a, b) => a.priority - b.priority);
    renderFields(
      byId('billing-fields')!,
      fields.filter((f) => f.fieldset === 'billing'),
      loaded,
    );
    if (loaded.requires_shipping) {
      byId('shipping')!.hidden = false;
      byId('shipping-rates')!.hidden = false;
      renderFields(
        byId('shipping-fields')!,
        fields.filter((f) => f.fieldset === 'shipping'),
        loaded,
      );
    }
    for (const p of ['billing', 'shipping']) {
      syncState(p, loaded);
      const c = byId(`${p}_country`);
      if (c) {
        c.addEventListener('change', () => {
          syncState(p, loaded);
          if (p === 'shipping') loadRates();
        });
      }
    }
    const postcode = byId('shipping_postcode');
    if (postcode) postcode.addEventListener('change', loadRates);
    summarize(current);
    // VAT at the buyer's country's rate: the summary follows the billing country.
    const country = byId<HTMLSelectElement>('billing_country');
    if (byId('tax') && country) {
      country.addEventListener('change', quoteTax);
      // A VAT number may remove the VAT (reverse charge): the summary asks again once it is typed.
      byId('vat_number')?.addEventListener('change', quoteTax);
      quoteTax();
    }
    stripe = mountStripe(minorUnits(current.total, current.decimals), current.currency);
    const save = byId('stripe-save');
    if (save) save.hidden = !current.items.some((i) => i.subscription);
    syncCardField(form);
    form.hidden = false;
  });
  form.addEventListener('change', (event) => {
    const target = event.target as Control | null;
    if (target && target.name === 'payment_method') syncCardField(form);
  });
  // A field's error goes as soon as it is corrected; the alert once no field is in error.
  form.addEventListener('input', (event) => {
    const target = event.target as Control | null;
    if (!target?.id || target.getAttribute('aria-invalid') !== 'true') return;
    if (target.value.trim() === '') return;
    setFieldError(target.id, '');
    const box = byId('store-alert');
    if (box && box.getAttribute('data-code') === 'required' && !form.querySelector('[aria-invalid=true]')) {
      clearError();
    }
  });
  function items(lines: Cart): { product_id: number; variation_id: number; qty: number }[] {
    return lines.items.map((i) => ({
      product_id: i.product_id,
      variation_id: i.variation_id,
      qty: i.quantity,
    }));
  }
  function quoteTax(): void {
    const billing = address(fields, 'billing');
    if (!cart) return;
    const priced = cart;
    if (!billing.country) {
      summarize(priced);
      return;
    }
    const vat = byId<HTMLInputElement>('vat_number')?.value.trim() ?? '';
    call<{ ok?: boolean; totals?: { tax_total: string; grand_total: string; reverse_charge?: boolean } }>(
      'POST',
      '/checkout/quote',
      {
        items: items(priced),
        billing: { country: billing.country, state: billing.state || '', postcode: billing.postcode || '' },
        coupons: priced.coupons.map((c) => c.code),
        ...(vat !== '' ? { vat_number: vat } : {}),
      },
    ).then((res) => {
      const t = res.body.totals;
      // A quote that fails (a product sold out meanwhile) leaves the cart's summary; submit says why.
      summarize(
        priced,
        !res.code && t
          ? { tax: t.tax_total, total: t.grand_total, reverseCharge: t.reverse_charge === true }
          : null,
      );
    });
  }
  function loadRates(): void {
    const dest = address(fields, 'shipping');
    const list = byId('rates-list')!;
    if (!dest.country || !cart) return;
    const priced = cart;
    call<{ rates?: ShippingRate[] }>('POST', '/checkout/shipping-rates', {
      shipping: { country: dest.country, state: dest.state || '', postcode: dest.postcode || '' },
      items: items(priced),
    }).then((res) => {
      clear(list);
      if (failed(res)) return;
      if (!res.body.rates?.length) {
        list.appendChild(el('p', { text: 'No shipping to this address.' }));
        return;
      }
      res.body.rates.forEach((r, i) => {
        const id = `rate-${i}`;
        list.appendChild(
          el('div', { className: 'radio' }, [
            el('input', { type: 'radio', name: 'shipping_method', id: id, value: r.id, checked: i === 0 }),
            el('label', {
              for: id,
              text: `${r.label} – ${money(priced, Number(r.cost).toFixed(priced.decimals))}`,
            }),
          ]),
        );
      });
    });
  }
  function validate(): HTMLElement | null {
    let first: HTMLElement | null = null;
    for (const f of fields) {
      const input = byId<Control>(f.key);
      if (!input) continue;
      const value = input.value.trim();
      let code = '';
      if (f.required && value === '') code = 'required';
      else if (f.type === 'email' && value !== '' && !EMAIL.test(value)) code = 'invalid_email';
      setFieldError(f.key, code);
      if (code && !first) first = input;
    }
    if (selectedGateway(form) === 'test_card') {
      const code = cardNumberCode(cardNumber().value);
      setFieldError('card_number', code);
      if (code && !first) first = cardNumber();
    }
    return first;
  }
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    clearError();
    if (!cart || !boot) return;
    const invalid = validate();
    if (invalid) {
      const why = byId(`${invalid.id}-error`);
      showError(why?.getAttribute('data-code') || 'required');
      invalid.focus();
      return;
    }
    if (!selectedGateway(form)) {
      showError('invalid_payment_method');
      return;
    }
    const body: {
      items: ReturnType<typeof items>;
      billing: Record<string, string>;
      coupons: string[];
      payment_method: string;
      payment_data?: { card_number: string };
      shipping?: Record<string, string>;
      shipping_method?: string;
      captcha_token?: string;
      vat_number?: string;
      confirm_country?: string;
    } = {
      items: items(cart),
      billing: address(fields, 'billing'),
      coupons: cart.coupons.map((c) => c.code),
      payment_method: selectedGateway(form),
    };
    // The card number too: the server refuses a malformed one before it makes the order.
    const data = paymentData(form);
    if (data && 'card_number' in data && data.card_number !== undefined) body.payment_data = data;
    if (boot.requires_shipping) {
      body.shipping = address(fields, 'shipping');
      const rate = form.querySelector<HTMLInputElement>('input[name=shipping_method]:checked');
      if (rate) body.shipping_method = rate.value;
    }
    const token = form.querySelector<HTMLInputElement>(
      '[name=cf-turnstile-response], [name=g-recaptcha-response]',
    );
    if (token?.value) body.captcha_token = token.value;
    // Taxes (docs/taxes.md): the VAT number as typed, and the billing country once confirmed.
    const vat = byId<HTMLInputElement>('vat_number');
    if (vat && vat.value.trim() !== '') body.vat_number = vat.value.trim();
    setFieldError('vat_number', '');
    if (byId<HTMLInputElement>('confirm_country')?.checked) body.confirm_country = body.billing.country;
    const button = byId<HTMLButtonElement>('place-order');
    busy(button, true);
    stripeReady(form, stripe)
      .then((ready) => {
        if (ready.code) {
          busy(button, false);
          showError(ready.code);
          return;
        }
        return call<{ order_id: number; order_key: string; nonce?: string }>(
          'POST',
          '/checkout/submit',
          body,
          {
            'idempotency-key': idempotency,
          },
        );
      })
      .then((res) => {
        if (!res) return;
        if (res.code) {
          busy(button, false);
          // A failed order after creation keeps its id and key: it can still be paid.
          const again =
            res.body.order_id && res.body.order_key
              ? el('p', {}, [
                  el('a', {
                    href: payUrl(res.body.order_id, res.body.order_key),
                    text: 'Try to pay this order again',
                  }),
                ])
              : null;
          showError(res.code, res.body.data, again);
          cardFieldError(res.code);
          taxRefusal(res.code, res.body);
          // A field the API names (data.params: {"billing.email": …}) gets the code beside it.
          const params = res.body.data?.params || {};
          for (const name of Object.keys(params)) {
            const parts = name.split('.');
            if (parts.length === 2 && (parts[0] === 'billing' || parts[0] === 'shipping')) {
              setFieldError(`${parts[0]}_${parts[1]}`, res.code);
            }
          }
          return;
        }
        if (res.body.nonce) nonce = res.body.nonce;
        return pay(form, res.body.order_id, res.body.order_key, button, stripe);
      });
  });
}

/** A refusal about taxes: the VAT number's field, or the confirmation of the billing country shown. */
function taxRefusal(code: string, body: Failure & { billing_country?: string; ip_country?: string }): void {
  if (code === 'invalid_vat_number') setFieldError('vat_number', code);
  if (code !== 'tax_country_unconfirmed') return;
  const field = byId('confirm-country-field');
  const box = byId<HTMLInputElement>('confirm_country');
  const label = byId('confirm_country-label');
  if (!field || !box || !label) return;
  label.textContent = `I confirm that I am in ${body.billing_country || 'my billing country'}${body.ip_country ? `, although my connection appears to come from ${body.ip_country}` : ''}.`;
  box.checked = false;
  field.hidden = false;
}

/* ---- pay an unpaid order ---- */
function payPage(form: HTMLFormElement): void {
  const stripe = mountStripe(Number(form.getAttribute('data-amount')), form.getAttribute('data-currency')!);
  form.hidden = false;
  syncCardField(form);
  form.addEventListener('change', () => {
    syncCardField(form);
  });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    clearError();
    const cardCode = selectedGateway(form) === 'test_card' ? cardNumberCode(cardNumber().value) : '';
    if (cardCode) {
      setFieldError('card_number', cardCode);
      showError(cardCode);
      cardNumber().focus();
      return;
    }
    setFieldError('card_number', '');
    const button = form.querySelector<HTMLButtonElement>('button[type=submit]');
    busy(button, true);
    stripeReady(form, stripe).then((ready) => {
      if (ready.code) {
        busy(button, false);
        showError(ready.code);
        return;
      }
      return pay(form, form.getAttribute('data-order')!, form.getAttribute('data-key')!, button, stripe);
    });
  });
}

function start(): void {
  const add = document.querySelector<HTMLFormElement>('form[data-store-page=product]');
  if (add) productPage(add);
  const trial = document.querySelector<HTMLFormElement>('form[data-store-page=trial]');
  if (trial) trialForm(trial);
  if (document.querySelector('[data-store-page=cart]')) cartPage();
  const checkout = document.querySelector<HTMLFormElement>('form[data-store-page=checkout]');
  if (checkout) checkoutPage(checkout);
  const payForm = document.querySelector<HTMLFormElement>('form[data-store-page=pay]');
  if (payForm) payPage(payForm);
}
if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();
