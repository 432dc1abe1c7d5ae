import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from '../helpers/app.js';

export interface CartBody {
  currency: string;
  currency_symbol: string;
  decimals: number;
  rate_id: string;
  items: {
    key: string;
    product_id: number;
    variation_id: number;
    quantity: number;
    name: string;
    price: string;
    subtotal: number;
    total: number;
    image: string;
    permalink: string;
    attributes: Record<string, string>;
    tiers: { variation_id: number; name: string; price: string }[];
  }[];
  subtotal: string;
  subtotal_tax: string;
  discount_total: string;
  discount_tax: string;
  shipping_total: string;
  shipping_tax: string;
  cart_contents_tax: string;
  fee_total: string;
  fee_tax: string;
  total: string;
  total_tax: string;
  coupons: { code: string; discount_type: string; discount_total: string; discount_tax: string }[];
  needs_shipping: boolean;
  needs_payment: boolean;
}

/**
 * A browser: keeps the cookies the server sets (and drops cleared ones) and sends them back, the
 * way a storefront would. `nonce` is sent as X-REST-Nonce once signed in, unless told otherwise.
 */
export class Browser {
  readonly cookies = new Map<string, string>();
  nonce: string | null = null;

  constructor(private readonly t: TestApp) {}

  cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async send(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    payload?: unknown,
    opts: { nonce?: boolean; headers?: Record<string, string> } = {},
  ): Promise<LightMyRequestResponse> {
    const headers: Record<string, string> = { ...opts.headers };
    if (this.cookies.size > 0) headers.cookie = this.cookieHeader();
    if (this.nonce && opts.nonce !== false && method !== 'GET') headers['x-rest-nonce'] = this.nonce;
    // A string is sent as the raw body (malformed JSON tests); anything else as JSON.
    if (typeof payload === 'string') headers['content-type'] = 'application/json';
    const res = await this.t.app.inject({ method, url: `/v1${url}`, headers, payload: payload as object });
    for (const c of res.cookies) {
      if (c.value === '' || c.maxAge === 0) this.cookies.delete(c.name);
      else this.cookies.set(c.name, c.value);
    }
    return res;
  }

  get(url = '/cart') {
    return this.send('GET', url);
  }

  post(url: string, payload: unknown = {}, opts: { nonce?: boolean } = {}) {
    return this.send('POST', url, payload, opts);
  }

  async cart(url = '/cart'): Promise<CartBody> {
    const res = await this.get(url);
    if (res.statusCode !== 200) throw new Error(`GET ${url}: ${res.statusCode} ${res.body}`);
    return res.json() as CartBody;
  }

  async add(product_id: number, extra: Record<string, unknown> = {}) {
    const res = await this.post('/cart/add', { product_id, ...extra });
    if (res.statusCode !== 200) throw new Error(`add ${product_id}: ${res.statusCode} ${res.body}`);
    return res.json() as { message: string; cart_item_key: string; cart: CartBody };
  }

  async login(email: string, password: string) {
    const res = await this.post('/auth/login', { email, password });
    if (res.statusCode !== 200) throw new Error(`login: ${res.statusCode} ${res.body}`);
    this.nonce = (res.json() as { nonce: string }).nonce;
  }
}

/** Creates a coupon as the administrator. */
export async function createCoupon(t: TestApp, body: Record<string, unknown>) {
  const res = await t.app.inject({ method: 'POST', url: '/v1/coupons', headers: t.adminAuth, payload: body });
  if (res.statusCode !== 201) throw new Error(`coupon: ${res.statusCode} ${res.body}`);
  return res.json() as { id: number; code: string };
}

export async function patchProduct(t: TestApp, id: number, body: Record<string, unknown>) {
  const res = await t.app.inject({
    method: 'PATCH',
    url: `/v1/products/${id}`,
    headers: t.adminAuth,
    payload: body,
  });
  if (res.statusCode !== 200) throw new Error(`patch product: ${res.statusCode} ${res.body}`);
  return res.json();
}
