/**
 * The store's one script (docs/storefront.md, 'Buying'): the product page's "Add to cart", the
 * cart, checkout and pay pages, driven through the public /v1 cart and checkout APIs
 * (docs/cart.md, docs/checkout.md). Plain JavaScript served from our origin, no framework and no
 * build: the pages' CSP allows no inline script or handler, so this file finds its page by
 * `data-store-page` and binds its listeners itself. Every element is made with createElement and
 * textContent: nothing from the API is ever parsed as markup.
 */
export const STORE_SCRIPT_PATH = '/store/assets/store.js';

// String.raw: the source below is JavaScript as the browser reads it (no escapes are processed).
export const STORE_SCRIPT = String.raw`(function () {
'use strict';
var API = '/v1';
var nonce = '';

/* Clear words for every code the cart and checkout APIs answer (docs/cart.md, docs/checkout.md). */
var WORDS = {
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
  currency_rate_stale: 'The exchange rate of this currency is out of date. Choose another currency, or try again later.',
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
  quote_failed: 'Your order could not be priced.'
};
var REASONS = {
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
  minimum_amount: 'Your cart is below this coupon\'s minimum spend.',
  maximum_amount: 'Your cart is above this coupon\'s maximum spend.',
  not_applicable: 'This coupon does not apply to what is in your cart.',
  individual_use: 'This coupon cannot be combined with the one already applied.'
};

function wordsFor(code, data) {
  var text = WORDS[code] || 'Something went wrong. Please try again.';
  if (data && data.reason && REASONS[data.reason]) {
    text = text + ' ' + REASONS[data.reason];
    if (data.reason === 'stock_limit' && typeof data.max_quantity === 'number') {
      text = text + ' At most ' + data.max_quantity + ' can be in your cart.';
    }
  }
  return text;
}

function el(tag, props, children) {
  var node = document.createElement(tag);
  if (props) {
    Object.keys(props).forEach(function (k) {
      var v = props[k];
      if (v === null || v === undefined || v === false) return;
      if (k === 'text') node.textContent = String(v);
      else if (k === 'className') node.className = v;
      else if (k === 'on') Object.keys(v).forEach(function (e) { node.addEventListener(e, v[e]); });
      else node.setAttribute(k, v === true ? '' : String(v));
    });
  }
  (children || []).forEach(function (c) {
    if (c === null || c === undefined || c === false) return;
    node.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
  });
  return node;
}
function byId(id) { return document.getElementById(id); }
function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

/* The page's alert region: the words, with the code in data-code for support and tests. */
function showError(code, data, extra) {
  var box = byId('store-alert');
  if (!box) return;
  clear(box);
  box.setAttribute('data-code', code);
  box.appendChild(el('p', { text: wordsFor(code === 'required' ? 'required_fields' : code, data) }));
  if (extra) box.appendChild(extra);
  box.hidden = false;
  box.focus();
}
function clearError() {
  var box = byId('store-alert');
  if (!box) return;
  clear(box);
  box.removeAttribute('data-code');
  box.hidden = true;
}

/* A call to the API: {status, body, code}. The code is the REST error's code or checkout's error_code. */
function call(method, path, body, headers) {
  var h = { accept: 'application/json' };
  if (body !== undefined) h['content-type'] = 'application/json';
  if (nonce && method !== 'GET') h['x-rest-nonce'] = nonce;
  Object.keys(headers || {}).forEach(function (k) { h[k] = headers[k]; });
  return fetch(API + path, {
    method: method, credentials: 'same-origin', headers: h,
    body: body === undefined ? undefined : JSON.stringify(body)
  }).then(function (res) {
    return res.json().catch(function () { return {}; }).then(function (json) {
      var code = '';
      if (res.status >= 400 || (json && json.ok === false)) {
        code = (json && (json.code || json.error_code)) || (json && json.status === 'failed' ? 'order_failed' : 'network_error');
      }
      return { status: res.status, body: json || {}, code: code };
    });
  }, function () { return { status: 0, body: {}, code: 'network_error' }; });
}
function failed(res) {
  if (!res.code) return false;
  showError(res.code, res.body && res.body.data);
  return true;
}
function busy(button, on) { if (button) { button.disabled = on; button.setAttribute('aria-busy', on ? 'true' : 'false'); } }

/* ---- product page: Add to cart ---- */
function productPage(form) {
  var button = form.querySelector('button[type=submit]');
  button.disabled = false;
  form.addEventListener('submit', function (event) {
    event.preventDefault();
    clearError();
    var qty = Number(form.elements.quantity.value);
    if (!Number.isInteger(qty) || qty < 1 || qty > 9999) { showError('invalid_quantity'); return; }
    var body = { product_id: Number(form.getAttribute('data-product')), quantity: qty };
    if (form.elements.variation_id) body.variation_id = Number(form.elements.variation_id.value);
    busy(button, true);
    call('POST', '/cart/add', body).then(function (res) {
      busy(button, false);
      if (!failed(res)) window.location.assign('/cart');
    });
  });
}

/* ---- product page: Start a free trial ---- */
function trialForm(form) {
  var button = form.querySelector('button[type=submit]');
  button.disabled = false;
  form.addEventListener('submit', function (event) {
    event.preventDefault();
    clearError();
    var email = form.elements.email;
    if (!email.value || !email.checkValidity()) { showError('invalid_email'); email.focus(); return; }
    busy(button, true);
    call('POST', '/trials', { product_id: Number(form.getAttribute('data-product')), email: email.value.trim() }).then(function (res) {
      busy(button, false);
      if (failed(res)) return;
      var box = byId('trial-result');
      clear(box);
      var until = new Date(res.body.usage_expires_at).toUTCString().replace(/ GMT$/, ' UTC');
      box.appendChild(el('p', { text: 'Your trial has started. Your license key:' }));
      box.appendChild(el('p', {}, [el('code', { className: 'license-key', text: res.body.license_key })]));
      box.appendChild(el('p', { text: 'It works until ' + until + '. Enter it in the plugin\'s settings.' }));
      box.hidden = false;
      form.hidden = true;
    });
  });
}

/* ---- cart ---- */
var currentCart = null;
function money(cart, value) { return cart.currency_symbol + value; }
function renderCart(cart) {
  currentCart = cart;
  var view = byId('cart-view');
  view.setAttribute('aria-busy', 'false');
  clear(view);
  var select = byId('currency');
  if (select) select.value = cart.currency;
  if (!cart.items.length) {
    view.appendChild(el('p', { text: 'Your cart is empty.' }));
    view.appendChild(el('p', {}, [el('a', { href: '/', text: 'See all products' })]));
    return;
  }
  var rows = cart.items.map(function (item) {
    var qtyId = 'qty-' + item.key;
    var qty = el('input', { id: qtyId, type: 'number', min: '1', max: '9999', value: item.quantity, inputmode: 'numeric', className: 'qty' });
    var update = el('button', { type: 'button', className: 'secondary', text: 'Update' });
    update.addEventListener('click', function () {
      var n = Number(qty.value);
      if (!Number.isInteger(n) || n < 0 || n > 9999) { showError('invalid_quantity'); qty.focus(); return; }
      cartCall('/cart/update', { cart_item_key: item.key, quantity: n }, update);
    });
    var remove = el('button', { type: 'button', className: 'link', text: 'Remove', 'aria-label': 'Remove ' + item.name });
    remove.addEventListener('click', function () { cartCall('/cart/remove', { cart_item_key: item.key }, remove); });
    var name = item.permalink ? el('a', { href: item.permalink.replace(/^https?:[/][/][^/]+/, ''), text: item.name }) : el('span', { text: item.name });
    // data-label names each cell where a narrow screen stacks the line (the header row is hidden there).
    return el('tr', {}, [
      el('td', { className: 'line-name' }, [name]),
      el('td', { className: 'num', 'data-label': 'Price' }, [money(cart, item.price)]),
      el('td', { 'data-label': 'Quantity' }, [el('label', { for: qtyId, className: 'visually-hidden', text: 'Quantity of ' + item.name }), el('span', { className: 'qty-row' }, [qty, update])]),
      el('td', { className: 'num', 'data-label': 'Subtotal' }, [money(cart, Number(item.subtotal).toFixed(cart.decimals))]),
      el('td', { className: 'line-remove' }, [remove])
    ]);
  });
  view.appendChild(el('div', { className: 'table-scroll', role: 'region', 'aria-label': 'Cart lines', tabindex: '0' }, [
    el('table', { className: 'lines cart-lines' }, [
      el('thead', {}, [el('tr', {}, [
        el('th', { scope: 'col', text: 'Product' }), el('th', { scope: 'col', className: 'num', text: 'Price' }),
        el('th', { scope: 'col', text: 'Quantity' }), el('th', { scope: 'col', className: 'num', text: 'Subtotal' }),
        el('th', { scope: 'col' }, [el('span', { className: 'visually-hidden', text: 'Remove' })])
      ])]),
      el('tbody', {}, rows)
    ])
  ]));

  // Coupons: the applied ones with a remove button, and a form to add one.
  var couponInput = el('input', { id: 'coupon_code', name: 'coupon_code', maxlength: '100', autocomplete: 'off' });
  var apply = el('button', { type: 'submit', className: 'secondary', text: 'Apply coupon' });
  var couponForm = el('form', { className: 'coupon-form', novalidate: true }, [
    el('label', { for: 'coupon_code', text: 'Coupon code' }), el('span', { className: 'qty-row' }, [couponInput, apply])
  ]);
  couponForm.addEventListener('submit', function (event) {
    event.preventDefault();
    cartCall('/cart/apply-coupon', { coupon_code: couponInput.value }, apply);
  });
  var applied = cart.coupons.map(function (c) {
    var rm = el('button', { type: 'button', className: 'link', text: 'Remove', 'aria-label': 'Remove coupon ' + c.code });
    rm.addEventListener('click', function () { cartCall('/cart/remove-coupon', { coupon_code: c.code }, rm); });
    return el('li', {}, [el('code', { text: c.code }), ' −' + money(cart, c.discount_total) + ' ', rm]);
  });

  var totals = el('dl', { className: 'totals' }, [
    el('dt', { text: 'Subtotal' }), el('dd', { text: money(cart, cart.subtotal) }),
    Number(cart.discount_total) > 0 ? el('dt', { text: 'Discount' }) : null,
    Number(cart.discount_total) > 0 ? el('dd', { text: '−' + money(cart, cart.discount_total) }) : null,
    Number(cart.total_tax) > 0 ? el('dt', { text: 'Tax' }) : null,
    Number(cart.total_tax) > 0 ? el('dd', { text: money(cart, cart.total_tax) }) : null,
    el('dt', { className: 'grand', text: 'Total' }),
    el('dd', { className: 'grand', id: 'cart-total' }, [money(cart, cart.total) + ' ', el('span', { className: 'muted', text: cart.currency })])
  ]);
  view.appendChild(el('div', { className: 'cart-foot' }, [
    el('div', {}, [couponForm, applied.length ? el('ul', { className: 'coupons', 'aria-label': 'Applied coupons' }, applied) : null]),
    el('div', {}, [totals,
      cart.needs_shipping ? el('p', { className: 'muted', text: 'Shipping and taxes are worked out at checkout.' }) : null,
      el('a', { href: '/checkout', className: 'button', text: 'Proceed to checkout' })])
  ]));
}
function cartCall(path, body, button) {
  clearError();
  busy(button, true);
  return call('POST', path, body).then(function (res) {
    busy(button, false);
    if (failed(res)) return;
    renderCart(res.body.cart);
  });
}
function cartPage() {
  var select = byId('currency');
  if (select) {
    select.addEventListener('change', function () {
      clearError();
      call('GET', '/cart?currency=' + encodeURIComponent(select.value)).then(function (res) {
        if (failed(res)) { if (currentCart) select.value = currentCart.currency; return; }
        renderCart(res.body);
      });
    });
  }
  call('GET', '/cart').then(function (res) { if (!failed(res)) renderCart(res.body); });
}

/* ---- checkout ---- */
var EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;
/* The test card's number as the server checks it (wellFormedCardNumber, src/modules/orders/gateways.ts):
   12 to 19 digits, spaces and dashes between them allowed, with a valid Luhn checksum. */
function cardNumberCode(value) {
  var digits = value.replace(/[\s-]/g, '');
  if (digits === '') return 'required';
  if (!/^[0-9]{12,19}$/.test(digits)) return 'invalid_card_number';
  var sum = 0;
  for (var i = 0; i < digits.length; i++) {
    var d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0 ? '' : 'invalid_card_number';
}
/* A refusal of the card number by the server, shown at its field; true when it was one. */
function cardFieldError(code) {
  if (code !== 'invalid_card_number') return false;
  setFieldError('card_number', code);
  byId('card_number').focus();
  return true;
}
function fieldInput(f, boot) {
  var attrs = { id: f.key, name: f.key, 'aria-describedby': f.key + '-error' };
  if (f.required) attrs['aria-required'] = 'true';
  if (f.type === 'country') {
    var select = el('select', attrs, [el('option', { value: '', text: 'Choose…' })].concat(boot.countries.map(function (c) {
      return el('option', { value: c.code, text: c.name });
    })));
    select.value = boot.default_country || '';
    return select;
  }
  if (f.type === 'state') return el('input', attrs);
  attrs.type = f.type === 'email' ? 'email' : f.type === 'tel' ? 'tel' : 'text';
  attrs.autocomplete = ({ billing_email: 'email', billing_first_name: 'given-name', billing_last_name: 'family-name', billing_phone: 'tel' })[f.key] || 'on';
  attrs.maxlength = '200';
  return el('input', attrs);
}
/* A state field is a list when the country has states, a text box otherwise. */
function syncState(prefix, boot) {
  var country = byId(prefix + '_country');
  var state = byId(prefix + '_state');
  if (!country || !state) return;
  var states = boot.states[country.value];
  var wantSelect = states && Object.keys(states).length > 0;
  if (wantSelect === (state.tagName === 'SELECT')) return;
  var attrs = { id: state.id, name: state.name, 'aria-describedby': state.id + '-error' };
  var next = wantSelect
    ? el('select', attrs, [el('option', { value: '', text: 'Choose…' })].concat(Object.keys(states).map(function (code) {
        return el('option', { value: code, text: states[code] });
      })))
    : el('input', attrs);
  state.parentNode.replaceChild(next, state);
}
function renderFields(container, fields, boot) {
  clear(container);
  fields.forEach(function (f) {
    if (f.hidden) return;
    var wide = f.key.indexOf('first_name') < 0 && f.key.indexOf('last_name') < 0;
    container.appendChild(el('div', { className: 'field' + (wide ? ' wide' : '') }, [
      el('label', { for: f.key }, [f.label, f.required ? el('span', { className: 'req', 'aria-hidden': 'true', text: ' *' }) : null]),
      fieldInput(f, boot),
      el('p', { className: 'field-error', id: f.key + '-error', hidden: true })
    ]));
  });
}
function setFieldError(id, code) {
  var input = byId(id);
  var err = byId(id + '-error');
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
function address(fields, prefix) {
  var out = {};
  fields.forEach(function (f) {
    if (f.fieldset !== prefix) return;
    var input = byId(f.key);
    if (input && input.value.trim() !== '') out[f.key.slice(prefix.length + 1)] = input.value.trim();
  });
  return out;
}
function summarize(cart) {
  var box = byId('order-summary');
  clear(box);
  box.appendChild(el('ul', { className: 'summary-lines' }, cart.items.map(function (i) {
    return el('li', {}, [el('span', { text: i.name + ' × ' + i.quantity }), el('span', { className: 'num', text: money(cart, Number(i.total).toFixed(cart.decimals)) })]);
  })));
  var parts = [el('dt', { text: 'Subtotal' }), el('dd', { text: money(cart, cart.subtotal) })];
  if (Number(cart.discount_total) > 0) {
    parts.push(el('dt', { text: 'Discount (' + cart.coupons.map(function (c) { return c.code; }).join(', ') + ')' }));
    parts.push(el('dd', { text: '−' + money(cart, cart.discount_total) }));
  }
  parts.push(el('dt', { className: 'grand', text: 'Total' }));
  parts.push(el('dd', { className: 'grand', id: 'checkout-total' }, [money(cart, cart.total) + ' ', el('span', { className: 'muted', text: cart.currency })]));
  box.appendChild(el('dl', { className: 'totals' }, parts));
  if (cart.needs_shipping) box.appendChild(el('p', { className: 'muted', text: 'Plus shipping and any tax for your address.' }));
}
function selectedGateway(form) {
  var checked = form.querySelector('input[name=payment_method]:checked');
  return checked ? checked.value : '';
}
function syncCardField(form) {
  var card = byId('card-field');
  if (card) card.hidden = selectedGateway(form) !== 'test_card';
  var stripe = byId('stripe-field');
  if (stripe) stripe.hidden = selectedGateway(form) !== 'stripe';
}
function paymentData(form) {
  if (selectedGateway(form) === 'stripe') {
    var save = byId('stripe_save_card');
    return { save_card: !!(save && save.checked && !byId('stripe-save').hidden) };
  }
  if (selectedGateway(form) !== 'test_card') return undefined;
  return { card_number: byId('card_number').value.replace(/[\s-]/g, '') };
}
function receiptUrl(id, key) { return '/checkout/order-received/' + id + '?key=' + encodeURIComponent(key); }
function payUrl(id, key) { return '/checkout/pay/' + id + '?key=' + encodeURIComponent(key); }

/* ---- Stripe: the Payment Element, on pages that load Stripe.js (the gateway is on) ---- */
/* Mounts the Payment Element for an amount in minor units of a currency, once Stripe.js has loaded. */
function mountStripe(amount, currency) {
  var box = byId('stripe-field');
  if (!box) return null;
  var handle = { stripe: null, elements: null };
  function mount() {
    if (!window.Stripe || handle.stripe) return;
    handle.stripe = window.Stripe(box.getAttribute('data-publishable-key'));
    handle.elements = handle.stripe.elements({ mode: 'payment', amount: amount, currency: currency.toLowerCase() });
    handle.elements.create('payment').mount('#payment-element');
  }
  if (window.Stripe) mount();
  else byId('stripe-js').addEventListener('load', mount);
  return handle;
}
function minorUnits(total, decimals) { return Math.round(Number(total) * Math.pow(10, decimals)); }
/* Stripe checks the card fields before anything is placed or paid: {error} when they are incomplete. */
function stripeReady(form, stripe) {
  if (selectedGateway(form) !== 'stripe') return Promise.resolve({});
  if (!stripe || !stripe.elements) return Promise.resolve({ code: 'gateway_unavailable' });
  return stripe.elements.submit().then(function (r) { return r && r.error ? { code: 'stripe_incomplete' } : {}; });
}
/* Confirms the order's PaymentIntent in the page: 3-D Secure and other steps run in Stripe's own frames. */
function confirmStripe(stripe, next, id, key, button) {
  return stripe.stripe.confirmPayment({
    elements: stripe.elements,
    clientSecret: next.client_secret,
    confirmParams: { return_url: window.location.origin + receiptUrl(id, key) },
    redirect: 'if_required'
  }).then(function (result) {
    busy(button, false);
    if (result && result.error) {
      showError('payment_declined', undefined, el('p', {}, [el('a', { href: payUrl(id, key), text: 'Pay for this order with another card or method' })]));
      return;
    }
    window.location.assign(receiptUrl(id, key));
  });
}
function pay(form, id, key, button, stripe) {
  return call('POST', '/checkout/pay-order/' + id, { key: key, payment_method: selectedGateway(form), payment_data: paymentData(form) }).then(function (res) {
    if (res.code) {
      busy(button, false);
      showError(res.code, res.body.data, el('p', {}, [el('a', { href: payUrl(id, key), text: 'Pay for this order with another card or method' })]));
      cardFieldError(res.code);
      return;
    }
    if (res.body.next && res.body.next.gateway === 'stripe' && stripe && stripe.stripe) return confirmStripe(stripe, res.body.next, id, key, button);
    busy(button, false);
    window.location.assign(receiptUrl(id, key));
  });
}
function checkoutPage(form) {
  var boot = null;
  var cart = null;
  var stripe = null;
  var fields = [];
  var idempotency = (window.crypto && crypto.randomUUID) ? crypto.randomUUID() : String(Date.now()) + Math.random();
  Promise.all([call('GET', '/checkout/bootstrap'), call('GET', '/cart')]).then(function (all) {
    if (failed(all[0]) || failed(all[1])) return;
    boot = all[0].body;
    cart = all[1].body;
    nonce = boot.nonce || '';
    if (!cart.items.length) {
      var main = form.parentNode;
      main.insertBefore(el('section', { className: 'card' }, [el('p', { text: 'Your cart is empty.' }), el('p', {}, [el('a', { href: '/', text: 'See all products' })])]), form);
      return;
    }
    fields = boot.fields.slice().sort(function (a, b) { return a.priority - b.priority; });
    renderFields(byId('billing-fields'), fields.filter(function (f) { return f.fieldset === 'billing'; }), boot);
    if (boot.requires_shipping) {
      byId('shipping').hidden = false;
      byId('shipping-rates').hidden = false;
      renderFields(byId('shipping-fields'), fields.filter(function (f) { return f.fieldset === 'shipping'; }), boot);
    }
    ['billing', 'shipping'].forEach(function (p) {
      syncState(p, boot);
      var c = byId(p + '_country');
      if (c) c.addEventListener('change', function () { syncState(p, boot); if (p === 'shipping') loadRates(); });
    });
    var postcode = byId('shipping_postcode');
    if (postcode) postcode.addEventListener('change', loadRates);
    summarize(cart);
    stripe = mountStripe(minorUnits(cart.total, cart.decimals), cart.currency);
    var save = byId('stripe-save');
    if (save) save.hidden = !cart.items.some(function (i) { return i.subscription; });
    syncCardField(form);
    form.hidden = false;
  });
  form.addEventListener('change', function (event) {
    if (event.target && event.target.name === 'payment_method') syncCardField(form);
  });
  // A field's error goes as soon as it is corrected; the alert once no field is in error.
  form.addEventListener('input', function (event) {
    var target = event.target;
    if (!target || !target.id || target.getAttribute('aria-invalid') !== 'true') return;
    if (target.value.trim() === '') return;
    setFieldError(target.id, '');
    var box = byId('store-alert');
    if (box && box.getAttribute('data-code') === 'required' && !form.querySelector('[aria-invalid=true]')) clearError();
  });
  function items() {
    return cart.items.map(function (i) { return { product_id: i.product_id, variation_id: i.variation_id, qty: i.quantity }; });
  }
  function loadRates() {
    var dest = address(fields, 'shipping');
    var list = byId('rates-list');
    if (!dest.country) return;
    call('POST', '/checkout/shipping-rates', { shipping: { country: dest.country, state: dest.state || '', postcode: dest.postcode || '' }, items: items() }).then(function (res) {
      clear(list);
      if (failed(res)) return;
      if (!res.body.rates || !res.body.rates.length) { list.appendChild(el('p', { text: 'No shipping to this address.' })); return; }
      res.body.rates.forEach(function (r, i) {
        var id = 'rate-' + i;
        list.appendChild(el('div', { className: 'radio' }, [
          el('input', { type: 'radio', name: 'shipping_method', id: id, value: r.id, checked: i === 0 }),
          el('label', { for: id, text: r.label + ' – ' + money(cart, Number(r.cost).toFixed(cart.decimals)) })
        ]));
      });
    });
  }
  function validate() {
    var first = null;
    fields.forEach(function (f) {
      var input = byId(f.key);
      if (!input) return;
      var value = input.value.trim();
      var code = '';
      if (f.required && value === '') code = 'required';
      else if (f.type === 'email' && value !== '' && !EMAIL.test(value)) code = 'invalid_email';
      setFieldError(f.key, code);
      if (code && !first) first = input;
    });
    if (selectedGateway(form) === 'test_card') {
      var code = cardNumberCode(byId('card_number').value);
      setFieldError('card_number', code);
      if (code && !first) first = byId('card_number');
    }
    return first;
  }
  form.addEventListener('submit', function (event) {
    event.preventDefault();
    clearError();
    if (!cart) return;
    var invalid = validate();
    if (invalid) {
      var why = byId(invalid.id + '-error');
      showError((why && why.getAttribute('data-code')) || 'required');
      invalid.focus();
      return;
    }
    if (!selectedGateway(form)) { showError('invalid_payment_method'); return; }
    var body = {
      items: items(),
      billing: address(fields, 'billing'),
      coupons: cart.coupons.map(function (c) { return c.code; }),
      payment_method: selectedGateway(form)
    };
    // The card number too: the server refuses a malformed one before it makes the order.
    var data = paymentData(form);
    if (data && data.card_number !== undefined) body.payment_data = data;
    if (boot.requires_shipping) {
      body.shipping = address(fields, 'shipping');
      var rate = form.querySelector('input[name=shipping_method]:checked');
      if (rate) body.shipping_method = rate.value;
    }
    var token = form.querySelector('[name=cf-turnstile-response], [name=g-recaptcha-response]');
    if (token && token.value) body.captcha_token = token.value;
    var button = byId('place-order');
    busy(button, true);
    stripeReady(form, stripe).then(function (ready) {
      if (ready.code) { busy(button, false); showError(ready.code); return; }
      return call('POST', '/checkout/submit', body, { 'idempotency-key': idempotency });
    }).then(function (res) {
      if (!res) return;
      if (res.code) {
        busy(button, false);
        // A failed order after creation keeps its id and key: it can still be paid.
        var again = res.body.order_id && res.body.order_key ? el('p', {}, [el('a', { href: payUrl(res.body.order_id, res.body.order_key), text: 'Try to pay this order again' })]) : null;
        showError(res.code, res.body.data, again);
        cardFieldError(res.code);
        // A field the API names (data.params: {"billing.email": …}) gets the code beside it.
        var params = (res.body.data && res.body.data.params) || {};
        Object.keys(params).forEach(function (name) {
          var parts = name.split('.');
          if (parts.length === 2 && (parts[0] === 'billing' || parts[0] === 'shipping')) setFieldError(parts[0] + '_' + parts[1], res.code);
        });
        return;
      }
      if (res.body.nonce) nonce = res.body.nonce;
      return pay(form, res.body.order_id, res.body.order_key, button, stripe);
    });
  });
}

/* ---- pay an unpaid order ---- */
function payPage(form) {
  var stripe = mountStripe(Number(form.getAttribute('data-amount')), form.getAttribute('data-currency'));
  form.hidden = false;
  syncCardField(form);
  form.addEventListener('change', function () { syncCardField(form); });
  form.addEventListener('submit', function (event) {
    event.preventDefault();
    clearError();
    var cardCode = selectedGateway(form) === 'test_card' ? cardNumberCode(byId('card_number').value) : '';
    if (cardCode) {
      setFieldError('card_number', cardCode);
      showError(cardCode);
      byId('card_number').focus();
      return;
    }
    setFieldError('card_number', '');
    var button = form.querySelector('button[type=submit]');
    busy(button, true);
    stripeReady(form, stripe).then(function (ready) {
      if (ready.code) { busy(button, false); showError(ready.code); return; }
      return pay(form, form.getAttribute('data-order'), form.getAttribute('data-key'), button, stripe);
    });
  });
}

function start() {
  var add = document.querySelector('form[data-store-page=product]');
  if (add) productPage(add);
  var trial = document.querySelector('form[data-store-page=trial]');
  if (trial) trialForm(trial);
  if (document.querySelector('[data-store-page=cart]')) cartPage();
  var checkout = document.querySelector('form[data-store-page=checkout]');
  if (checkout) checkoutPage(checkout);
  var payForm = document.querySelector('form[data-store-page=pay]');
  if (payForm) payPage(payForm);
}
if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();
})();
`;
