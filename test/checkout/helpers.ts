import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { Browser } from '../cart/helpers.js';
import type { TestApp } from '../helpers/app.js';
import type { SubmitResult } from '../helpers/factories.js';

/**
 * Submits an order from this browser (payment test_card unless `body` says otherwise) and answers
 * the response and its body, whatever the status: for tests of refusals. An order that must be
 * accepted is `createOrder` (test/helpers/factories.ts).
 */
export async function submit(
  b: Browser,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
) {
  const res = await b.send('POST', '/checkout/submit', { payment_method: 'test_card', ...body }, { headers });
  return { res, body: res.json() as SubmitResult };
}

export async function payOrder(b: Browser, id: number, body: Record<string, unknown>) {
  return b.send('POST', `/checkout/pay-order/${id}`, body);
}

export const licensesOfOrder = (t: TestApp, orderId: number) =>
  t.app.services.database.db
    .selectFrom('licenses')
    .selectAll()
    .where('order_id', '=', orderId)
    .orderBy('id')
    .execute();

/** How many orders the store has. */
export const orderCount = async (t: TestApp) =>
  Number(
    (
      await t.app.services.database.db
        .selectFrom('orders')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

export function expectBody(res: LightMyRequestResponse, status: number, body: Record<string, unknown>) {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.json()).toMatchObject(body);
}
