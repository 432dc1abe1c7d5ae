import { type Clock, iso } from '../../clock.js';
import type { Tx } from '../../db/transaction.js';
import { ApiError } from '../../http/errors.js';
import { allocate, fromMinor } from '../catalogue/money.js';
import type { Attachment } from '../mail/transport.js';
import type { OrderRow, TaxLine } from '../orders/orders.model.js';
import type { OrdersService } from '../orders/orders.service.js';
import type { RefundHook } from '../orders/refunds.service.js';
import type { Settings } from '../settings/settings.schemas.js';
import type { SettingsService } from '../settings/settings.service.js';
import { renderPdf } from './invoices.pdf.js';
import type { InvoiceRow, InvoicesRepository } from './invoices.repository.js';
import type { DocumentKind } from './invoices.tables.js';

type RefundRow = Parameters<RefundHook>[1];

/** Amounts are decimal strings in the order's currency, as the order API answers them. */
export interface InvoiceSnapshot {
  kind: DocumentKind;
  number: string;
  issued_at: string;
  order_id: number;
  /** For a credit note: the invoice it credits. */
  invoice_number: string | null;
  currency: string;
  prices_include_tax: boolean;
  seller: { name: string; address: string; tax_number: string };
  buyer: { name: string; company: string; email: string; address: string[] };
  lines: {
    name: string;
    quantity: number;
    unit_price: string;
    subtotal: string;
    tax: string;
    total: string;
  }[];
  totals: { subtotal: string; discount: string; tax: string; total: string };
  /** For a credit note: the refund's reason. */
  reason: string;
  /** The buyer's VAT number ('' = none); absent from documents issued before VAT numbers. */
  buyer_tax_id?: string;
  /** Sold with reverse charge: no VAT, the buyer accounts for it (docs/taxes.md). */
  reverse_charge?: boolean;
  /** The tax per rate, e.g. {name: "VAT DE", rate: "19.0000", amount: "19.00"}. */
  taxes?: { name: string; rate: string; amount: string }[];
}

/** What the API answers for an invoice or credit note (its snapshot is in the PDF). */
export interface InvoiceView {
  id: number;
  kind: DocumentKind;
  number: string;
  order_id: number;
  refund_id: number | null;
  invoice_number: string | null;
  total: string;
  currency: string;
  issued_at: string;
}

/** The messages of a paid order (src/modules/mail/templates). */
const RECEIPTS: ReadonlySet<string> = new Set(['order_receipt', 'payment_received', 'renewal_paid']);

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/**
 * Invoices and credit notes (docs/invoices.md): an order's first payment issues its invoice, each
 * refund a credit note, both numbered from gap-free sequences in the transaction that pays or
 * refunds, and frozen as a snapshot that later changes (settings, products, the buyer's address)
 * never alter.
 */
export class InvoicesService {
  constructor(
    private readonly repo: InvoicesRepository,
    private readonly orders: OrdersService,
    private readonly settings: SettingsService,
    private readonly clock: Clock,
  ) {}

  /** The paid hook: the order's invoice, in the payment's transaction. */
  async orderPaid(order: OrderRow, paidAt: Date, tx: Tx): Promise<void> {
    const settings = await this.settings.get(tx);
    const number = await this.number('invoice', order, settings, paidAt, tx);
    const snapshot = await this.snapshot(order, { kind: 'invoice', number, issuedAt: paidAt, settings }, tx);
    await this.repo.insert(
      {
        order_id: order.id,
        kind: 'invoice',
        number,
        refund_id: null,
        snapshot: JSON.stringify(snapshot),
        issued_at: iso(paidAt),
      },
      tx,
    );
  }

  /**
   * The refund hook: a credit note for the refunded amount, referencing the order's invoice. Its
   * tax is the order's tax in the proportion the refund bears to the order's total.
   */
  async refunded(order: OrderRow, refund: RefundRow, tx: Tx): Promise<void> {
    const invoice = (await this.repo.ofOrder(order.id, tx)).find((d) => d.kind === 'invoice');
    // An order paid before invoices existed has none to credit.
    if (!invoice) return;
    const settings = await this.settings.get(tx);
    const now = this.clock.now();
    const number = await this.number('credit_note', order, settings, now, tx);
    const base = await this.snapshot(order, { kind: 'credit_note', number, issuedAt: now, settings }, tx);
    const amount = Number(refund.amount);
    const total = Number(order.total);
    const tax = total > 0 ? Math.round((Number(order.total_tax) * amount) / total) : 0;
    const money = (minor: number) => fromMinor(minor, order.decimals);
    // The credited tax shared over the order's rates in proportion to what each charged.
    const rates = JSON.parse(order.tax_lines) as TaxLine[];
    const shares = allocate(
      tax,
      rates.map((r) => Math.max(0, Number(r.amount))),
    );
    const snapshot: InvoiceSnapshot = {
      ...base,
      taxes: rates.map((r, i) => ({ name: r.name, rate: r.rate, amount: money(shares[i]!) })),
      invoice_number: invoice.number,
      reason: refund.reason,
      lines: [
        {
          name: `Refund of invoice ${invoice.number}`,
          quantity: 1,
          unit_price: money(amount - tax),
          subtotal: money(amount - tax),
          tax: money(tax),
          total: money(amount),
        },
      ],
      totals: { subtotal: money(amount - tax), discount: money(0), tax: money(tax), total: money(amount) },
    };
    await this.repo.insert(
      {
        order_id: order.id,
        kind: 'credit_note',
        number,
        refund_id: refund.id,
        snapshot: JSON.stringify(snapshot),
        issued_at: iso(now),
      },
      tx,
    );
  }

  /** The order's invoice and credit notes, oldest first (404 `order_not_found` for no order). */
  async list(orderId: number): Promise<InvoiceView[]> {
    if (!(await this.orders.find(orderId))) throw new ApiError('order_not_found');
    return (await this.repo.ofOrder(orderId)).map(view);
  }

  /** One document of the order with its snapshot; 404 `invoice_not_found` when the order has none such. */
  async document(orderId: number, kind: DocumentKind, documentId?: number): Promise<InvoiceSnapshot> {
    const doc = await this.find(orderId, kind, documentId);
    if (!doc) throw new ApiError('invoice_not_found');
    return doc;
  }

  /** The order's invoice (or the credit note `documentId`), or null when it has none such. */
  async find(orderId: number, kind: DocumentKind, documentId?: number): Promise<InvoiceSnapshot | null> {
    const docs = await this.repo.ofOrder(orderId);
    const doc = docs.find((d) => d.kind === kind && (documentId === undefined || d.id === documentId));
    return doc ? (JSON.parse(doc.snapshot) as InvoiceSnapshot) : null;
  }

  /**
   * The invoice PDF a paid order's message carries: the receipt, the payment received for a
   * bank transfer or cheque, and a paid renewal. Other messages carry nothing.
   */
  async receiptAttachments(kind: string, data: unknown): Promise<Attachment[]> {
    if (!RECEIPTS.has(kind)) return [];
    const orderId = (data as { order_id?: unknown }).order_id;
    if (typeof orderId !== 'number') return [];
    const doc = await this.find(orderId, 'invoice');
    if (!doc) return [];
    const content = Buffer.from(await renderPdf(doc));
    return [{ filename: `${doc.number}.pdf`, content, contentType: 'application/pdf' }];
  }

  /**
   * `INV-2026-000123` with the yearly reset, `INV-000123` without. A test order's documents are
   * numbered `TEST-…` in sequences of their own, so deleting test data leaves no gap in the real ones.
   */
  private async number(
    kind: DocumentKind,
    order: OrderRow,
    settings: Settings,
    at: Date,
    tx: Tx,
  ): Promise<string> {
    const [prefix, yearly] =
      kind === 'invoice'
        ? [settings.invoice_number_prefix, settings.invoice_number_yearly_reset]
        : [settings.credit_note_number_prefix, settings.credit_note_number_yearly_reset];
    const year = at.getUTCFullYear();
    const test = Number(order.test) === 1;
    const n = await this.repo.nextNumber(test ? `test_${kind}` : kind, yearly ? year : 0, tx);
    return `${test ? 'TEST-' : ''}${prefix}${yearly ? `${year}-` : ''}${String(n).padStart(6, '0')}`;
  }

  private async snapshot(
    order: OrderRow,
    doc: { kind: DocumentKind; number: string; issuedAt: Date; settings: Settings },
    tx: Tx,
  ): Promise<InvoiceSnapshot> {
    const { settings } = doc;
    const money = (minor: number | string) => fromMinor(Number(minor), order.decimals);
    const billing = JSON.parse(order.billing) as Record<string, unknown>;
    const items = await this.orders.items(order.id, tx);
    const cityLine = [str(billing.postcode), str(billing.city)].filter(Boolean).join(' ');
    return {
      kind: doc.kind,
      number: doc.number,
      issued_at: iso(doc.issuedAt),
      order_id: order.id,
      invoice_number: null,
      currency: order.currency,
      prices_include_tax: order.prices_include_tax === 1,
      seller: {
        name: settings.invoice_seller_name || settings.store_name,
        address: settings.invoice_seller_address,
        tax_number: settings.invoice_seller_tax_number,
      },
      buyer: {
        name: [str(billing.first_name), str(billing.last_name)].filter(Boolean).join(' '),
        company: str(billing.company),
        email: str(billing.email),
        address: [
          str(billing.address_1),
          str(billing.address_2),
          cityLine,
          str(billing.state),
          str(billing.country),
        ].filter(Boolean),
      },
      lines: items.map((item) => ({
        name: item.name,
        quantity: item.quantity,
        unit_price: money(item.price),
        subtotal: money(item.subtotal),
        tax: money(item.total_tax),
        total: money(Number(item.total) + Number(item.total_tax)),
      })),
      totals: {
        subtotal: money(order.subtotal),
        discount: money(order.discount_total),
        tax: money(order.total_tax),
        total: money(order.total),
      },
      reason: '',
      buyer_tax_id: order.buyer_tax_id,
      reverse_charge: order.reverse_charge === 1,
      taxes: (JSON.parse(order.tax_lines) as TaxLine[]).map((r) => ({
        name: r.name,
        rate: r.rate,
        amount: money(r.amount),
      })),
    };
  }
}

const view = (row: InvoiceRow): InvoiceView => {
  const snapshot = JSON.parse(row.snapshot) as InvoiceSnapshot;
  return {
    id: row.id,
    kind: row.kind,
    number: row.number,
    order_id: row.order_id,
    refund_id: row.refund_id,
    invoice_number: snapshot.invoice_number,
    total: snapshot.totals.total,
    currency: snapshot.currency,
    issued_at: row.issued_at,
  };
};
