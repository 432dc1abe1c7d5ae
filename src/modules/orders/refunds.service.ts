import { type Clock, iso } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { type Tx, withTransaction } from '../../db/transaction.js';
import { ApiError } from '../../http/errors.js';
import type { Actor, SystemActor } from '../audit/audit.model.js';
import type { AuditService } from '../audit/audit.service.js';
import { fromMinor, toMinor } from '../catalogue/money.js';
import type { LicenseService } from '../licensing/license.service.js';
import type { SettingsService } from '../settings/settings.service.js';
import type { Gateways } from './gateways.js';
import type { OrderRow } from './orders.model.js';
import type { OrdersRepository } from './orders.repository.js';
import { PAID, parseHolds } from './orders.service.js';
import type { OrderNoteKind } from './orders.tables.js';
import type { NoteRow, RefundRow, RefundsRepository } from './refunds.repository.js';

/** What runs inside the transaction of a full refund (src/wiring.ts: the order's subscriptions are cancelled). */
export type OrderRefundedHook = (order: OrderRow, tx: Tx) => Promise<void>;

/** What runs inside the transaction of every refund, full or partial (src/wiring.ts: its credit note). */
export type RefundHook = (order: OrderRow, refund: RefundRow, tx: Tx) => Promise<void>;

export interface RefundInput {
  /** A decimal in the order's currency: a string ("12.50") or a number. */
  amount: string | number;
  reason?: string;
  restock?: boolean;
}

/** A plain decimal: digits, optionally a point and more digits (no sign, no exponent). */
const DECIMAL = /^[0-9]{1,15}(\.[0-9]{1,15})?$/;

/**
 * The amount in minor units of an order with `decimals` fraction digits, or 400
 * `invalid_refund_amount` for anything but a positive amount the currency can express.
 */
export function refundMinor(amount: string | number, decimals: number): number {
  const text = typeof amount === 'number' ? (Number.isFinite(amount) ? String(amount) : '') : amount.trim();
  const minor = DECIMAL.test(text) ? toMinor(text, decimals) : null;
  if (minor === null || minor <= 0) throw new ApiError('invalid_refund_amount');
  return minor;
}

const actorColumns = (actor?: Actor) => ({
  actor_user_id: actor?.user_id ?? null,
  actor_email: actor?.email ?? null,
});
const actorView = (row: { actor_user_id: number | null; actor_email: string | null }) =>
  row.actor_user_id === null ? null : { user_id: Number(row.actor_user_id), email: row.actor_email ?? '' };

/**
 * Refunds and order notes (docs/payments.md). A refund runs in one transaction that holds the
 * order's row: the refunded total is raised only while it stays within the order's total (so
 * parallel refunds can never pass it), the gateway gives the money back, and the refund, its note
 * and audit entry and, for a full refund, the order's `refunded` status, its licenses (by the
 * `refund_license_action` setting: revoked with `license.revoked`, suspended or kept), its
 * subscriptions (cancelled, with `subscription.status_changed`) and its stock commit together or
 * not at all.
 */
export class RefundsService {
  private refundedHooks: OrderRefundedHook[] = [];
  private refundHooks: RefundHook[] = [];

  constructor(
    private readonly database: Pick<Database, 'db'>,
    private readonly orders: OrdersRepository,
    private readonly repo: RefundsRepository,
    private readonly licenses: LicenseService,
    private readonly settings: SettingsService,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    private readonly gateways: Gateways,
  ) {}

  /** Runs inside the transaction of every full refund, after the order became `refunded`. */
  onRefunded(hook: OrderRefundedHook): void {
    this.refundedHooks.push(hook);
  }

  /** Runs inside the transaction of every refund (made here or recorded from the gateway), after its row is written. */
  onRefund(hook: RefundHook): void {
    this.refundHooks.push(hook);
  }

  private async requireOrder(id: number, tx?: Tx): Promise<OrderRow> {
    const order = await this.orders.find(id, tx);
    if (!order) throw new ApiError('order_not_found');
    return order;
  }

  /**
   * Refunds `input.amount` of a paid order, in the order of the documented refusals: the order
   * exists (404 `order_not_found`), the amount is well formed (400 `invalid_refund_amount`), the
   * order is paid (409 `order_not_refundable`), the amount fits what remains (409
   * `refund_exceeds_total`), then the gateway gives it back (its own refusal is the answer).
   */
  async refund(orderId: number, input: RefundInput, actor?: Actor) {
    const order = await this.requireOrder(orderId);
    const amount = refundMinor(input.amount, order.decimals);
    const reason = (input.reason ?? '').trim();
    const restock = input.restock ?? true;
    const { refund_license_action: action } = await this.settings.get();
    const gateway = this.gateways.get(order.payment_method);
    const id = await withTransaction(this.database, async (tx) => {
      const locked = await this.orders.lock(orderId, tx);
      if (!locked) throw new ApiError('order_not_found');
      if (!PAID.has(locked.status)) throw new ApiError('order_not_refundable');
      const now = iso(this.clock.now());
      if (!(await this.repo.addRefunded(orderId, amount, now, tx)))
        throw new ApiError('refund_exceeds_total');
      const before = Number(locked.refunded_total);
      const refunded = before + amount;
      const full = refunded === Number(locked.total);
      // The key names this refund by the refunded total before it: a retry of the same refund
      // (after this transaction rolled back) sends the same key, a later refund another.
      const reference = await gateway?.refund({
        order_id: orderId,
        amount,
        currency: locked.currency,
        reason,
        idempotency_key: `tollgate-refund-${orderId}-${before}-${amount}`,
        tx,
      });
      const refundId = await this.repo.insertRefund(
        {
          order_id: orderId,
          amount,
          reason,
          full_refund: full ? 1 : 0,
          restock: restock ? 1 : 0,
          ...actorColumns(actor),
          created_at: now,
        },
        tx,
      );
      const row = (await this.repo.findRefund(refundId, tx))!;
      for (const hook of this.refundHooks) await hook(locked, row, tx);
      const money = (minor: number) => `${fromMinor(minor, locked.decimals)} ${locked.currency}`;
      const body = `${full ? 'Refunded in full' : 'Partly refunded'}: ${money(amount)} (${money(refunded)} of ${money(Number(locked.total))} refunded).${reference ? ` Reference: ${reference}.` : ''}${reason ? ` Reason: ${reason}` : ''}`;
      await this.repo.insertNote(
        { order_id: orderId, kind: 'refund', body, ...actorColumns(actor), created_at: now },
        tx,
      );
      const changes: Record<string, { before: unknown; after: unknown }> = {
        refunded_total: {
          before: fromMinor(before, locked.decimals),
          after: fromMinor(refunded, locked.decimals),
        },
      };
      if (full) {
        await this.completeRefund(locked, { restock, action, now }, tx, actor);
        changes.status = { before: locked.status, after: 'refunded' };
      }
      if (actor) {
        await this.audit.record(
          actor,
          { entity_type: 'order', entity_id: orderId, action: 'refund', changes },
          tx,
        );
      }
      return refundId;
    });
    return this.refundView((await this.repo.findRefund(id))!, order.decimals);
  }

  /**
   * A full refund, in its transaction: the status, the stock (when asked), the licenses by the
   * store's setting, then the refunded hooks (src/wiring.ts: subscriptions).
   */
  private async completeRefund(
    order: OrderRow,
    opts: { restock: boolean; action: 'revoke' | 'suspend' | 'keep'; now: string },
    tx: Tx,
    actor?: Actor,
  ): Promise<void> {
    const patch: Partial<OrderRow> = { status: 'refunded', updated_at: opts.now };
    if (opts.restock && order.stock_held !== '[]') {
      // The same release as a failed or cancelled order's: what the order held goes back to stock.
      for (const hold of parseHolds(order)) await this.orders.giveStock(hold, tx);
      patch.stock_held = '[]';
    }
    await this.orders.update(order.id, patch, tx);
    await this.applyLicenseAction(order.id, opts.action, tx, actor);
    const refunded = { ...order, ...patch };
    for (const hook of this.refundedHooks) await hook(refunded, tx);
  }

  /** What `refund_license_action` does to the order's licenses: revoke, suspend or keep them. */
  private async applyLicenseAction(
    orderId: number,
    action: 'revoke' | 'suspend' | 'keep',
    tx: Tx,
    actor?: Actor,
  ): Promise<void> {
    if (action === 'keep') return;
    for (const licenseId of await this.licenses.idsOfOrder(orderId, tx)) {
      if (action === 'revoke') await this.licenses.revokeIn(licenseId, tx, actor);
      else await this.licenses.suspendIn(licenseId, tx, actor);
    }
  }

  /**
   * A refund made at the gateway itself (Stripe's Dashboard), in the caller's transaction:
   * `refundedMinor` is the payment's whole refunded amount as the gateway reports it, so what the
   * order has not recorded yet is the difference. A refund made here already raised the order's
   * refunded total (its gateway event then records nothing), and an older event arriving after a
   * newer one finds nothing left. Recorded as the console records a refund (refund row, note, and
   * on a full refund the status, stock, `refund_license_action` and the refunded hooks), without
   * asking the gateway for anything. Answers the amount recorded (0 for nothing).
   */
  async recordGatewayRefund(
    orderId: number,
    refundedMinor: number,
    reference: string,
    tx: Tx,
    /** Why, when not a plain refund (a lost chargeback). */
    why: string | null = null,
  ): Promise<number> {
    const locked = await this.orders.lock(orderId, tx);
    if (!locked || !PAID.has(locked.status)) return 0;
    const before = Number(locked.refunded_total);
    const amount = Math.min(refundedMinor, Number(locked.total)) - before;
    if (amount <= 0) return 0;
    const now = iso(this.clock.now());
    if (!(await this.repo.addRefunded(orderId, amount, now, tx))) return 0;
    const refunded = before + amount;
    const full = refunded === Number(locked.total);
    const reason = why ? `At the payment provider: ${why}` : 'Refunded at the payment provider';
    const refundId = await this.repo.insertRefund(
      {
        order_id: orderId,
        amount,
        reason,
        full_refund: full ? 1 : 0,
        restock: 1,
        ...actorColumns(),
        created_at: now,
      },
      tx,
    );
    const row = (await this.repo.findRefund(refundId, tx))!;
    for (const hook of this.refundHooks) await hook(locked, row, tx);
    const money = (minor: number) => `${fromMinor(minor, locked.decimals)} ${locked.currency}`;
    await this.repo.insertNote(
      {
        order_id: orderId,
        kind: 'refund',
        body: `${full ? 'Refunded in full' : 'Partly refunded'} at the payment provider${why ? ` (${why})` : ''}: ${money(amount)} (${money(refunded)} of ${money(Number(locked.total))} refunded). Reference: ${reference}.`,
        ...actorColumns(),
        created_at: now,
      },
      tx,
    );
    if (full) {
      const { refund_license_action: action } = await this.settings.get(tx);
      await this.completeRefund(locked, { restock: true, action, now }, tx);
    }
    return amount;
  }

  /** A note written by Tollgate itself (a gateway's payment or refund), in the caller's transaction. */
  async systemNote(orderId: number, kind: OrderNoteKind, body: string, tx: Tx): Promise<void> {
    await this.repo.insertNote(
      { order_id: orderId, kind, body, ...actorColumns(), created_at: iso(this.clock.now()) },
      tx,
    );
  }

  /**
   * A chargeback opened against the order (docs/payments.md, 'Disputes'), in the caller's
   * transaction: the order is flagged (`disputed_at`, its first dispute's time), the note is
   * written, and its licenses follow `refund_license_action` as for a full refund. The money and
   * the order's status stay as they are: the dispute is the card issuer's to decide.
   */
  async recordDispute(orderId: number, body: string, tx: Tx): Promise<void> {
    const locked = await this.orders.lock(orderId, tx);
    if (!locked) return;
    const now = iso(this.clock.now());
    await this.orders.update(orderId, { disputed_at: locked.disputed_at ?? now, updated_at: now }, tx);
    await this.systemNote(orderId, 'dispute', body, tx);
    const { refund_license_action: action } = await this.settings.get(tx);
    await this.applyLicenseAction(orderId, action, tx);
  }

  /**
   * A chargeback closed (docs/payments.md, 'Disputes'), in the caller's transaction, with a note
   * and an audit entry by `actor`. Won (or an inquiry closed without one): the order's dispute flag
   * is cleared and the licenses the dispute suspended are active again (a revocation is for good,
   * so revoked licenses stay revoked). Lost: the bank took `amountMinor` back, which is recorded as a
   * refund at the payment provider, so a loss of the whole payment completes the refund
   * (`refund_license_action`, stock, subscriptions) as one made in the console does.
   */
  async closeDispute(
    orderId: number,
    outcome: { won: boolean; amountMinor: number; reference: string; body: string },
    actor: SystemActor,
    tx: Tx,
  ): Promise<void> {
    const locked = await this.orders.lock(orderId, tx);
    if (!locked) return;
    const now = iso(this.clock.now());
    await this.systemNote(orderId, 'dispute', outcome.body, tx);
    const changes: Record<string, { before: unknown; after: unknown }> = {};
    if (outcome.won) {
      if (locked.disputed_at !== null) {
        await this.orders.update(orderId, { disputed_at: null, updated_at: now }, tx);
        changes.disputed_at = { before: locked.disputed_at, after: null };
      }
      const { refund_license_action: action } = await this.settings.get(tx);
      if (action === 'suspend') {
        for (const id of await this.licenses.idsOfOrder(orderId, tx)) {
          await this.licenses.reinstateIn(id, tx, actor);
        }
      }
    } else {
      const before = Number(locked.refunded_total);
      const recorded = await this.recordGatewayRefund(
        orderId,
        before + outcome.amountMinor,
        outcome.reference,
        tx,
        'chargeback lost',
      );
      if (recorded > 0) {
        changes.refunded_total = {
          before: fromMinor(before, locked.decimals),
          after: fromMinor(before + recorded, locked.decimals),
        };
      }
    }
    const action = outcome.won ? 'dispute_won' : 'dispute_lost';
    await this.audit.record(actor, { entity_type: 'order', entity_id: orderId, action, changes }, tx);
  }

  async listRefunds(orderId: number) {
    const order = await this.requireOrder(orderId);
    const rows = await this.repo.refunds(orderId);
    return {
      refunds: rows.map((r) => this.refundView(r, order.decimals)),
      refunded_total: fromMinor(Number(order.refunded_total), order.decimals),
      remaining: fromMinor(Number(order.total) - Number(order.refunded_total), order.decimals),
    };
  }

  /** The administrator's own note on an order, recorded in the audit trail with it. */
  async addNote(orderId: number, body: string, actor?: Actor) {
    await this.requireOrder(orderId);
    const text = body.trim();
    if (text === '') throw new ApiError('rest_invalid_param', { data: { params: { body: 'empty' } } });
    const id = await withTransaction(this.database, async (tx) => {
      const noteId = await this.repo.insertNote(
        {
          order_id: orderId,
          kind: 'note',
          body: text,
          ...actorColumns(actor),
          created_at: iso(this.clock.now()),
        },
        tx,
      );
      if (actor) {
        const changes = { note: { before: null, after: text } };
        await this.audit.record(
          actor,
          { entity_type: 'order', entity_id: orderId, action: 'note', changes },
          tx,
        );
      }
      return noteId;
    });
    return this.noteView((await this.repo.findNote(id))!);
  }

  async listNotes(orderId: number) {
    await this.requireOrder(orderId);
    return { notes: (await this.repo.notes(orderId)).map((n) => this.noteView(n)) };
  }

  private refundView(r: RefundRow, decimals: number) {
    return {
      id: Number(r.id),
      order_id: Number(r.order_id),
      amount: fromMinor(Number(r.amount), decimals),
      reason: r.reason,
      full: r.full_refund === 1,
      restock: r.restock === 1,
      created_at: r.created_at,
      actor: actorView(r),
    };
  }

  private noteView(n: NoteRow) {
    return {
      id: Number(n.id),
      order_id: Number(n.order_id),
      kind: n.kind,
      body: n.body,
      created_at: n.created_at,
      actor: actorView(n),
    };
  }
}
