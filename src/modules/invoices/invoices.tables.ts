import type { Id } from '../../db/schema.js';

/** What a numbered document is: an order's invoice, or a refund's credit note (docs/invoices.md). */
export type DocumentKind = 'invoice' | 'credit_note';

/** Test orders' documents are numbered in sequences of their own (docs/invoices.md). */
export type SequenceKind = DocumentKind | `test_${DocumentKind}`;

export interface InvoicesTables {
  /** The last number given in each sequence; `period` is the year, or 0 without a yearly reset. */
  document_sequences: { kind: SequenceKind; period: number; last: number };
  invoices: {
    id: Id;
    order_id: number;
    kind: DocumentKind;
    number: string;
    /** The refund a credit note credits; null for an invoice. */
    refund_id: number | null;
    /** JSON InvoiceSnapshot, frozen when issued. */
    snapshot: string;
    issued_at: string;
  };
}
