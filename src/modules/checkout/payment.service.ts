import type { Database } from '../../db/database.js';
import { withTransaction } from '../../db/transaction.js';
import { ApiError, type ErrorCode } from '../../http/errors.js';
import { safeEqual } from '../../random.js';
import type { AuthUser } from '../accounts/accounts.service.js';
import { TEST_GATEWAY } from '../catalogue/gateways.model.js';
import { fromMinor } from '../catalogue/money.js';
import { acceptsCurrency } from '../orders/gateways.js';
import type { OrderRow } from '../orders/orders.model.js';
import { type OrderCoupon, type OrdersService, PAID, type ShippingLine } from '../orders/orders.service.js';
import type { SubscriptionsService } from '../subscriptions/subscriptions.service.js';
import { refusal } from './checkout.errors.js';
import type { CheckoutService } from './checkout.service.js';
import type { SubmitService } from './submit.service.js';

export const UNAUTHORIZED = { error: 'Unauthorized access to order' } as const;

/** A pay-order refusal: checkout's body with the text for people in `messages` too. */
function payRefusal(code: ErrorCode, message = new ApiError(code).message, messages = [message]): ApiError {
  return refusal(code, { message, data: { messages } });
}

/**
 * The receipt (`GET /checkout/order/{id}`) and payment (`POST /checkout/pay-order/{id}`) of
 * docs/checkout.md.
 */
export class PaymentService {
  constructor(
    private readonly database: Pick<Database, 'db'>,
    private readonly checkout: CheckoutService,
    private readonly orders: OrdersService,
    private readonly subscriptions: SubscriptionsService,
    private readonly submit: SubmitService,
  ) {}

  /**
   * What the customer must do to pay an order on hold (a bank transfer or a cheque): its gateway's
   * instructions, '' for any other order. Callers have already checked the order's key or owner.
   */
  async paymentInstructions(orderId: number): Promise<string> {
    const order = await this.orders.find(orderId);
    if (order?.status !== 'on-hold' || !order.payment_method) return '';
    return (await this.checkout.catalogue.gateways.find(order.payment_method))?.instructions ?? '';
  }

  /** The order key (constant-time), the owner, or an administrator. */
  private allowed(order: OrderRow, key: string | undefined, user: AuthUser | null): boolean {
    if (key !== undefined && key !== '' && safeEqual(key, order.order_key)) return true;
    if (!user) return false;
    return user.role === 'administrator' || (order.customer_id !== null && user.id === order.customer_id);
  }

  async receipt(id: number, key: string | undefined, user: AuthUser | null) {
    const order = await this.orders.find(id);
    // An unknown order answers like a forbidden one: receipts must not reveal which ids exist.
    if (!order || !this.allowed(order, key, user)) return UNAUTHORIZED;
    const items = await this.orders.items(order.id);
    const products = await this.orders.productsOf(items);
    const num = (m: number) => Number(fromMinor(Number(m), order.decimals));
    const billing = JSON.parse(order.billing) as Record<string, string>;
    const gateways = await this.checkout.catalogue.gateways.list();
    return {
      ok: true,
      id: order.id,
      number: String(order.id),
      status: order.status,
      created_via: order.created_via,
      subtotal: num(order.subtotal),
      discount_total: num(order.discount_total),
      shipping_total: num(order.shipping_total),
      tax_total: num(order.total_tax),
      total: num(order.total),
      currency: order.currency,
      currency_symbol: order.currency_symbol,
      payment_method: order.payment_method_title,
      needs_shipping: items.some((i) => products.get(i.product_id)?.virtual === false),
      shipping_lines: (JSON.parse(order.shipping_lines) as ShippingLine[]).map((l) => ({
        id: l.id,
        method_title: l.method_title,
        method_id: l.method_id,
        total: fromMinor(l.total, order.decimals),
      })),
      coupons: (JSON.parse(order.coupons) as OrderCoupon[]).map((c) => c.code),
      tracking_number: order.tracking_number,
      tracking_url: order.tracking_url,
      billing: {
        first_name: billing.first_name ?? '',
        last_name: billing.last_name ?? '',
        email: billing.email ?? '',
        phone: billing.phone ?? '',
      },
      items: items.map((i) => ({
        id: i.id,
        product_id: i.product_id,
        variation_id: i.variation_id,
        name: i.name,
        qty: i.quantity,
        price: num(i.price),
        total: num(i.total),
        image: '',
      })),
      subscription: await this.subscriptions.ofOrder(order),
      available_gateways: gateways
        .filter((g) => g.enabled && acceptsCurrency(g, order.currency))
        .map((g) => ({ id: g.id, title: g.title })),
    };
  }

  /**
   * The four rules of pay-order (docs/checkout.md, 'Failure bodies and HTTP statuses') in order:
   * access, not already paid, an open renewal window (a closed one cancels the subscription's open
   * renewal orders), the original gateway. Then the gateway runs; the status change, license
   * issuance and renewal effects commit together. A gateway whose payment the customer confirms
   * with the provider (Stripe) leaves the order `pending` (a failed one takes its stock again).
   */
  async pay(
    id: number,
    body: { key?: string; payment_method: string; payment_data?: Record<string, unknown> },
    user: AuthUser | null,
  ) {
    const order = await this.orders.find(id);
    if (!order) throw payRefusal('order_not_found');
    if (!this.allowed(order, body.key, user)) throw payRefusal('unauthorized', UNAUTHORIZED.error);
    // A refunded order was paid once: it is not paid again.
    if (PAID.has(order.status) || order.status === 'refunded') throw payRefusal('order_already_paid');
    if (order.status === 'cancelled') throw payRefusal('order_cancelled');
    if (await this.subscriptions.closeExpiredRenewal(order)) {
      throw payRefusal('renewal_window_expired');
    }
    if (order.payment_method !== '' && body.payment_method !== order.payment_method) {
      throw payRefusal(
        'gateway_mismatch',
        `This order must be paid with its original payment method (${order.payment_method_title}).`,
      );
    }
    // An order placed in test mode is not paid with the test card once the store is live.
    if (body.payment_method === TEST_GATEWAY && (await this.checkout.settings.get()).store_mode === 'live') {
      throw payRefusal('test_mode_only');
    }
    const gateway = await this.checkout.catalogue.gateways.find(body.payment_method);
    const impl = gateway?.enabled ? this.orders.gateway(gateway.id) : null;
    if (!gateway || !impl || !acceptsCurrency(gateway, order.currency)) {
      throw payRefusal('gateway_unavailable');
    }
    // A renewal or a move of a license that can no longer apply is not charged (docs/selling.md).
    try {
      await this.orders.assertLicenseActionsApply(order);
    } catch (e) {
      if (e instanceof ApiError && e.status === 409) throw payRefusal(e.code as ErrorCode);
      throw e;
    }
    // Before the gateway runs: a malformed card number leaves the order as it was.
    const malformed = impl.paymentDataError?.(body.payment_data ?? {});
    if (malformed) {
      const message = new ApiError(malformed.code).message;
      throw refusal(malformed.code, {
        message,
        data: { messages: [message], params: { [malformed.field]: 'invalid' } },
      });
    }
    const outcome = await impl.pay({
      order,
      total: order.total,
      currency: order.currency,
      payment_data: body.payment_data ?? {},
    });
    const items = await this.orders.items(order.id);
    const products = await this.orders.productsOf(items);
    const settings = await this.checkout.settings.get();
    const ctx = { products, settings };
    await withTransaction(this.database, async (tx) => {
      const locked = await this.orders.lock(order.id, tx);
      if (!locked || PAID.has(locked.status) || locked.status === 'refunded') {
        throw payRefusal('order_already_paid');
      }
      if (!outcome.ok) {
        if (locked.status !== 'failed') await this.orders.transition(locked, 'failed', ctx, tx);
        return;
      }
      let current = locked;
      if (locked.status === 'failed' && locked.stock_held === '[]') {
        const held = await this.orders.holdAgain(locked, items, products, tx);
        if (!held) throw payRefusal('out_of_stock');
        current = held;
      }
      if (current.payment_method === '') {
        await this.orders.update(
          current.id,
          { payment_method: gateway.id, payment_method_title: gateway.title },
          tx,
        );
      }
      if (current.status !== outcome.status) await this.orders.transition(current, outcome.status!, ctx, tx);
    });
    if (!outcome.ok) {
      throw payRefusal('payment_declined', undefined, outcome.messages ?? ['The payment was declined.']);
    }
    // A pending payment (Stripe) is confirmed by the customer on the page, which needs `next`; the
    // order is paid later, by the provider's event.
    return {
      ok: true,
      redirect: this.submit.urls(order).thankyou_url,
      ...(outcome.next ? { next: outcome.next } : {}),
    };
  }
}
