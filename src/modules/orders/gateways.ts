import type { Tx } from '../../db/transaction.js';
import type { ErrorCode } from '../../http/errors.js';
import { OFFLINE_GATEWAYS, TEST_GATEWAY } from '../catalogue/gateways.model.js';
import type { OrderRow } from './orders.model.js';

/**
 * Payment gateways behind one interface (docs/catalogue.md, 'Payment gateways'). Offline gateways
 * take no money here: the order waits `on-hold` for the store to confirm the transfer. `test_card`
 * is an online gateway for tests and demos: 4242424242424242 pays, 4000000000000002 is declined,
 * anything else is refused as an invalid card. Stripe is added by src/wiring.ts (docs/payments.md).
 */

export interface PaymentOutcome {
  ok: boolean;
  /**
   * The status a successful payment moves the order to; `pending` when the customer still
   * confirms the payment with the provider, which tells the store later (Stripe's event).
   */
  status?: 'processing' | 'on-hold' | 'pending';
  /** Why the payment failed, for the customer. */
  messages?: string[];
  /** What the page needs to finish a `pending` payment (Stripe's publishable key and client secret). */
  next?: Record<string, string>;
}

export interface PaymentGateway {
  id: string;
  offline: boolean;
  pay(input: {
    order: OrderRow;
    total: number;
    currency: string;
    payment_data: Record<string, unknown>;
  }): Promise<PaymentOutcome>;
  /**
   * A refusal of the form of `payment_data` (a card number that cannot be one), with the field it
   * names: checked at submit, before the order is made, and at pay-order, before anything is
   * charged or the order changes (docs/checkout.md). Null when the data may be tried.
   */
  paymentDataError?(payment_data: Record<string, unknown>): { code: ErrorCode; field: string } | null;
  /**
   * Gives `amount` (minor units of `currency`) of the order's payment back (docs/payments.md,
   * 'Refunds'). Called inside the refund's transaction, once the order's refunded total has been
   * raised under its row lock, so a gateway is never asked for more than the order's total. A
   * gateway refuses by throwing an ApiError of its own: the refund rolls back and that is the
   * answer. A gateway that took no money here records only. `idempotency_key` is the same for a
   * retry of the same refund (the order, its refunded total before it, the amount), so a provider
   * that honours it never gives the money back twice. A gateway reads the database in `tx` only
   * (SQLite has one connection). Answers the provider's reference, if any.
   */
  refund(input: {
    order_id: number;
    amount: number;
    currency: string;
    reason: string;
    idempotency_key: string;
    tx: Tx;
  }): Promise<string | null>;
}

/** Nothing to give back here: the store returns the transfer or cheque itself. */
const recordOnly = async (): Promise<null> => null;

const offline = (id: string): PaymentGateway => ({
  id,
  offline: true,
  pay: async () => ({ ok: true, status: 'on-hold' }),
  refund: recordOnly,
});

export const TEST_CARD_SUCCESS = '4242424242424242';
export const TEST_CARD_DECLINED = '4000000000000002';

/**
 * Whether `raw` can be a card number at all: 12 to 19 digits (spaces and dashes between them are
 * how people type it) whose Luhn checksum holds. The store's script checks the same before it
 * submits (src/pages/store/client/store.ts).
 */
export function wellFormedCardNumber(raw: unknown): boolean {
  if (typeof raw !== 'string') return false;
  const digits = raw.replace(/[\s-]/g, '');
  if (!/^\d{12,19}$/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

const testCard: PaymentGateway = {
  id: TEST_GATEWAY,
  offline: false,
  paymentDataError: (data) =>
    data.card_number !== undefined && !wellFormedCardNumber(data.card_number)
      ? { code: 'invalid_card_number', field: 'payment_data.card_number' }
      : null,
  async pay({ payment_data }) {
    const raw = payment_data.card_number;
    const card = typeof raw === 'string' ? raw.replace(/[\s-]/g, '') : '';
    if (card === TEST_CARD_SUCCESS) return { ok: true, status: 'processing' };
    if (card === TEST_CARD_DECLINED) return { ok: false, messages: ['Your card was declined.'] };
    return { ok: false, messages: ['The card number is invalid.'] };
  },
  // The test card takes no real money, so there is none to give back.
  refund: recordOnly,
};

const BUILT_IN = new Map<string, PaymentGateway>([
  ...[...OFFLINE_GATEWAYS].map((id) => [id, offline(id)] as const),
  [TEST_GATEWAY, testCard],
]);

/**
 * The implementations behind the gateway ids (the catalogue holds titles, switches and
 * currencies): the built-in ones, and those src/wiring.ts adds from other modules.
 */
export class Gateways {
  private readonly impls = new Map(BUILT_IN);

  add(gateway: PaymentGateway): void {
    this.impls.set(gateway.id, gateway);
  }

  get(id: string): PaymentGateway | null {
    return this.impls.get(id) ?? null;
  }
}

/** Whether a gateway accepts a currency: its list is empty (all) or names it. */
export const acceptsCurrency = (g: { currencies: string[] }, currency: string): boolean =>
  g.currencies.length === 0 || g.currencies.includes(currency);
