import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { Browser } from '../cart/helpers.js';
import type { TestApp } from '../helpers/app.js';

export { Browser, createCoupon, setSettings } from '../cart/helpers.js';

export const BILLING = {
  first_name: 'Ada',
  last_name: 'Lovelace',
  email: 'ada@example.com',
  phone: '+44 20 7946 0000',
  address_1: '1 Analytical Row',
  city: 'London',
  state: '',
  postcode: 'N1 1AA',
  country: 'GB',
};

let seq = 0;
/** A unique billing email, so rate-limit buckets and auto-registration do not interfere. */
export const uniqueEmail = (tag = 'buyer') => `${tag}-${Date.now().toString(36)}-${++seq}@example.com`;

export interface SubmitResult {
  ok: boolean;
  order_id: number;
  order_key: string;
  status: string;
  pay_url: string;
  thankyou_url: string;
  user_logged_in: boolean;
  nonce?: string;
  error?: string;
  error_code?: string;
}

/** Submits an order for `items` (default payment test_card) from this browser. */
export async function submit(
  b: Browser,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
) {
  const res = await b.send('POST', '/checkout/submit', { payment_method: 'test_card', ...body }, { headers });
  return { res, body: res.json() as SubmitResult };
}

export async function submitOk(b: Browser, body: Record<string, unknown>) {
  const { res, body: out } = await submit(b, body);
  if (res.statusCode !== 200 || !out.ok) throw new Error(`submit failed: ${res.statusCode} ${res.body}`);
  return out;
}

export async function payOrder(b: Browser, id: number, body: Record<string, unknown>) {
  return b.send('POST', `/checkout/pay-order/${id}`, body);
}

export async function admin(t: TestApp, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown) {
  return t.app.inject({ method, url: `/v1${url}`, headers: t.adminAuth, payload: payload as object });
}

export async function adminOk<T = Record<string, unknown>>(
  t: TestApp,
  method: 'GET' | 'POST' | 'PATCH',
  url: string,
  payload?: unknown,
): Promise<T> {
  const res = await admin(t, method, url, payload);
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
  return res.json() as T;
}

export const licensesOfOrder = (t: TestApp, orderId: number) =>
  t.app.services.database.db
    .selectFrom('licenses')
    .selectAll()
    .where('order_id', '=', orderId)
    .orderBy('id')
    .execute();

export function expectBody(res: LightMyRequestResponse, status: number, body: Record<string, unknown>) {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.json()).toMatchObject(body);
}
