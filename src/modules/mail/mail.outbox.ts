import { type Clock, iso } from '../../clock.js';
import type { Tx } from '../../db/transaction.js';
import { OFFLINE_GATEWAYS } from '../catalogue/gateways.model.js';
import { fromMinor } from '../catalogue/money.js';
import type { OrderRow } from '../orders/orders.model.js';
import type { Settings } from '../settings/settings.schemas.js';
import type { SettingsService } from '../settings/settings.service.js';
import type { MailRepository } from './mail.repository.js';
import type { MessageData, MessageKind, OrderFacts, RenewalFacts } from './templates/facts.js';
import { render } from './templates/index.js';

/**
 * The setting that switches each message on and off (docs/email.md, 'Messages'); a password reset,
 * a sign-in link and a transfer's link are always sent (without them the request does nothing).
 */
export const MESSAGE_SETTINGS: { [K in MessageKind]: keyof Settings | null } = {
  order_receipt: 'mail_order_receipt',
  order_on_hold: 'mail_order_on_hold',
  payment_received: 'mail_payment_received',
  renewal_due: 'mail_renewal_due',
  renewal_paid: 'mail_renewal_paid',
  renewal_failed: 'mail_renewal_failed',
  subscription_status: 'mail_subscription_status',
  license_expiring: 'mail_license_expiring',
  license_expired: 'mail_license_expired',
  renewal_reminder: 'mail_renewal_reminder',
  password_reset: null,
  account_created: 'mail_account_created',
  sign_in_link: null,
  license_transfer: null,
};

/** Gateways whose orders an administrator marks paid by hand: their payment gets its own message. */

const money = (minor: number, order: Pick<OrderRow, 'decimals' | 'currency'>) =>
  `${fromMinor(Number(minor), order.decimals)} ${order.currency}`;

const billingEmail = (order: Pick<OrderRow, 'billing'>): string => {
  try {
    const email = (JSON.parse(order.billing) as { email?: unknown }).email;
    return typeof email === 'string' ? email : '';
  } catch {
    return '';
  }
};

/**
 * The one way a message enters the mail outbox: written with the transaction of the change that
 * causes it (each method takes that `tx`, from the hooks in src/wiring.ts), so a committed change
 * always has its message and a rolled-back one never does. The worker (mail.worker.ts) sends it.
 */
/** The card that will pay a renewal, in words; null: none is kept; undefined: the store takes no cards. */
export type RenewalCardLookup = (order: OrderRow, tx: Tx) => Promise<string | null | undefined>;

export class MailOutbox {
  constructor(
    private readonly repo: MailRepository,
    private readonly settings: SettingsService,
    private readonly clock: Clock,
    private readonly origin: () => string,
  ) {}

  /** Adds one message unless its setting is off or it has no recipient; a repeated dedupe key adds nothing. */
  async enqueue<K extends MessageKind>(
    kind: K,
    recipient: string,
    data: MessageData[K],
    tx: Tx,
    dedupeKey: string | null = null,
  ): Promise<number | null> {
    const settings = await this.settings.get(tx);
    const toggle = MESSAGE_SETTINGS[kind];
    if (toggle && settings[toggle] !== true) return null;
    if (!recipient) return null;
    const { subject } = render(kind, data, {
      store_name: settings.store_name,
      accent: settings.store_accent_color,
      origin: this.origin(),
      link: '',
    });
    const now = iso(this.clock.now());
    return this.repo.insert(
      {
        kind,
        recipient: recipient.slice(0, 254),
        subject,
        data: JSON.stringify(data),
        dedupe_key: dedupeKey,
        status: 'pending',
        attempts: 0,
        next_attempt_at: now,
        locked_until: null,
        last_error: null,
        sent_at: null,
        created_at: now,
        updated_at: now,
      },
      tx,
    );
  }

  /** An order's first payment (the orders paid hook): a renewal's, an offline payment's, or the receipt. */
  async orderPaid(order: OrderRow, tx: Tx): Promise<void> {
    if (order.created_via === 'renewal') {
      const facts = await this.renewalFacts(order, tx);
      await this.enqueue('renewal_paid', facts.to, facts.data, tx);
      return;
    }
    const facts = await this.orderFacts(order, tx);
    const kind = OFFLINE_GATEWAYS.has(order.payment_method) ? 'payment_received' : 'order_receipt';
    await this.enqueue(kind, facts.to, facts.data, tx);
  }

  /** An order waits on hold for a bank transfer or cheque: how to pay it (the gateway's instructions). */
  async orderOnHold(order: OrderRow, instructions: string, tx: Tx): Promise<void> {
    const facts = await this.orderFacts(order, tx);
    await this.enqueue('order_on_hold', facts.to, { ...facts.data, instructions }, tx);
  }

  private renewalCard: RenewalCardLookup | null = null;

  /** How the renewal-due message learns which kept card will pay (src/wiring.ts: the Stripe gateway). */
  describeRenewalCard(lookup: RenewalCardLookup): void {
    this.renewalCard = lookup;
  }

  /**
   * A renewal order created (by the renewal worker or an administrator): its payment is due, by the
   * card that will be charged when one is kept, else by its pay link.
   */
  async renewalCreated(order: OrderRow, tx: Tx): Promise<void> {
    if (order.created_via !== 'renewal') return;
    const facts = await this.renewalFacts(order, tx);
    const card = await this.renewalCard?.(order, tx);
    await this.enqueue(
      'renewal_due',
      facts.to,
      card === undefined ? facts.data : { ...facts.data, card },
      tx,
    );
  }

  /** An order moved to `failed`: for a renewal, its customer is asked to pay again. */
  async orderFailed(order: OrderRow, tx: Tx): Promise<void> {
    if (order.created_via !== 'renewal') return;
    const facts = await this.renewalFacts(order, tx);
    await this.enqueue('renewal_failed', facts.to, facts.data, tx);
  }

  async subscriptionChanged(subscriptionId: number, status: string, reason: string, tx: Tx): Promise<void> {
    const sub = await this.repo.subscription(subscriptionId, tx);
    if (!sub?.email) return;
    await this.enqueue(
      'subscription_status',
      sub.email,
      {
        subscription_id: subscriptionId,
        first_name: sub.first_name ?? '',
        product: sub.product_name ?? `Product of subscription #${subscriptionId}`,
        status,
        reason,
      },
      tx,
    );
  }

  /** A forgot-password request for an existing account; the link is minted when the message is sent. */
  async passwordReset(user: { id: number; email: string; first_name: string }, tx: Tx): Promise<void> {
    await this.enqueue('password_reset', user.email, { user_id: user.id, first_name: user.first_name }, tx);
  }

  /** A sign-in link request for an existing customer; the link is minted when the message is sent. */
  async signInLink(user: { id: number; email: string; first_name: string }, tx: Tx): Promise<void> {
    await this.enqueue('sign_in_link', user.email, { user_id: user.id, first_name: user.first_name }, tx);
  }

  /** Checkout created an account: a "set your password" link is minted when the message is sent. */
  async accountCreated(user: { id: number; email: string; first_name: string }, tx: Tx): Promise<void> {
    await this.enqueue('account_created', user.email, { user_id: user.id, first_name: user.first_name }, tx);
  }

  /** A license offered to the account of an email: the link that accepts it is minted when the message is sent. */
  async licenseTransfer(
    transfer: {
      id: number;
      to_email: string;
      product_name: string | null;
      from_email: string | null;
      keep_activations: number;
      expires_at: string;
    },
    tx: Tx,
  ): Promise<void> {
    await this.enqueue(
      'license_transfer',
      transfer.to_email,
      {
        transfer_id: Number(transfer.id),
        product: transfer.product_name ?? 'software',
        from_email: transfer.from_email ?? '',
        keep_activations: transfer.keep_activations === 1,
        expires_at: transfer.expires_at,
      },
      tx,
    );
  }

  private async recipientOf(order: OrderRow, tx: Tx): Promise<{ to: string; first_name: string }> {
    const user = order.customer_id !== null ? await this.repo.user(order.customer_id, tx) : undefined;
    let firstName = user?.first_name ?? '';
    try {
      const billing = JSON.parse(order.billing) as { first_name?: unknown };
      if (typeof billing.first_name === 'string' && billing.first_name) firstName = billing.first_name;
    } catch {
      // A malformed address names nobody; the message greets without a name.
    }
    return { to: billingEmail(order) || user?.email || '', first_name: firstName };
  }

  /** An order email's recipient, the order's items, and the facts every order email starts with. */
  private async orderStart(order: OrderRow, tx: Tx) {
    const { to, first_name } = await this.recipientOf(order, tx);
    const items = await this.repo.orderItems(order.id, tx);
    return { to, items, head: { order_id: order.id, order_key: order.order_key, first_name } };
  }

  private async orderFacts(order: OrderRow, tx: Tx): Promise<{ to: string; data: OrderFacts }> {
    const { to, items, head } = await this.orderStart(order, tx);
    const licenses = await this.repo.orderLicenses(order.id, tx);
    return {
      to,
      data: {
        ...head,
        payment_method_title: order.payment_method_title,
        total: money(order.total, order),
        items: items.map((i) => ({ name: i.name, quantity: i.quantity, total: money(i.total, order) })),
        licenses: licenses.map((l) => ({ key: l.license_key, product: l.product_name ?? '' })),
      },
    };
  }

  private async renewalFacts(order: OrderRow, tx: Tx): Promise<{ to: string; data: RenewalFacts }> {
    const { to, items, head } = await this.orderStart(order, tx);
    return {
      to,
      data: {
        ...head,
        subscription_id: order.subscription_id,
        product: items[0]?.name ?? `order #${order.id}`,
        total: money(order.total, order),
        due_at: order.renewal_due_at,
      },
    };
  }
}
