import { useQueries, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, ok } from '../api';
import { when } from '../format';
import type { Order, OrderRefund } from '../resources';
import { ErrorNote, Loading, Notice } from '../ui/feedback';
import { Field, TextField } from '../ui/form';
import { columnsFor, DataTable } from '../ui/table';
import { orderStatusLabel } from '../words';
import { money } from './Orders';

/** Statuses an order can be refunded in (docs/payments.md). */
const REFUNDABLE = new Set(['processing', 'completed']);

const refundCol = columnsFor<OrderRefund>();

/**
 * An order's refunds and notes (docs/payments.md): the Refund form (POST /v1/orders/{id}/refunds),
 * the refunds made, the notes (GET/POST /v1/orders/{id}/notes). The API's refusals are shown with
 * their codes.
 */
export function OrderRefunds({ order: o }: { order: Order }) {
  const client = useQueryClient();
  const refunds = useQuery({
    queryKey: ['order-refunds', o.id],
    queryFn: () => ok(api.GET('/v1/orders/{id}/refunds', { params: { path: { id: o.id } } })),
  });
  const notes = useQuery({
    queryKey: ['order-notes', o.id],
    queryFn: () => ok(api.GET('/v1/orders/{id}/notes', { params: { path: { id: o.id } } })),
  });
  // Which of the order's products are physical: restocking means nothing for a virtual one.
  const productIds = [...new Set(o.items.map((i) => i.product_id))];
  const products = useQueries({
    queries: productIds.map((pid) => ({
      queryKey: ['product', pid],
      queryFn: () => ok(api.GET('/v1/products/{id}', { params: { path: { id: pid } } })),
    })),
  });
  const stocked = products.some((p) => p.data && !p.data.virtual);
  // The amount starts empty: a refund is a sum the owner types, never one the form chose.
  const [amount, setAmount] = useState('');
  const [reason, setReason] = useState('');
  const [restock, setRestock] = useState(true);
  const [note, setNote] = useState('');
  const [refundError, setRefundError] = useState<unknown>(null);
  const [noteError, setNoteError] = useState<unknown>(null);
  const [notice, setNotice] = useState('');
  const [noteNotice, setNoteNotice] = useState('');
  // Each form has its own: the refund's refresh of the page must not disable "Add note" under a
  // keyboard user's Tab (a disabled button is skipped, and focus lands elsewhere).
  const [refunding, setRefunding] = useState(false);
  const [noting, setNoting] = useState(false);

  const remaining = refunds.data?.remaining ?? null;
  const refreshAll = async () => {
    for (const key of [
      'order',
      'orders',
      'order-refunds',
      'order-notes',
      'order-invoices',
      'licenses',
      'audit-events',
    ]) {
      await client.invalidateQueries({ queryKey: [key] });
    }
  };

  const refund = async () => {
    setRefundError(null);
    setNotice('');
    setRefunding(true);
    try {
      const made = await ok(
        api.POST('/v1/orders/{id}/refunds', {
          params: { path: { id: o.id } },
          body: {
            amount: amount.trim(),
            ...(reason.trim() ? { reason: reason.trim() } : {}),
            restock: stocked && restock,
          },
        }),
      );
      setNotice(
        made.full
          ? `Order #${o.number} is refunded in full (${money(o, made.amount)}).`
          : `Refunded ${money(o, made.amount)} of order #${o.number}.`,
      );
      setAmount('');
      setReason('');
      await refreshAll();
    } catch (e) {
      setRefundError(e);
    } finally {
      setRefunding(false);
    }
  };

  const addNote = async () => {
    setNoteError(null);
    setNoteNotice('');
    setNoting(true);
    try {
      await ok(api.POST('/v1/orders/{id}/notes', { params: { path: { id: o.id } }, body: { body: note } }));
      setNote('');
      setNoteNotice('Note added.');
      await refreshAll();
    } catch (e) {
      setNoteError(e);
    } finally {
      setNoting(false);
    }
  };

  const refundColumns = [
    refundCol.accessor('created_at', { header: 'When', cell: (c) => when(c.getValue()) }),
    refundCol.accessor('amount', { header: 'Amount', cell: (c) => money(o, c.getValue()) }),
    refundCol.accessor('full', { header: 'Kind', cell: (c) => (c.getValue() ? 'Full' : 'Partial') }),
    refundCol.accessor('reason', { header: 'Reason', cell: (c) => c.getValue() || '—' }),
    refundCol.accessor('actor', { header: 'By', cell: (c) => c.getValue()?.email ?? 'Tollgate' }),
  ];

  return (
    <>
      <section aria-labelledby="order-refunds" className="card">
        <h2 id="order-refunds">Refunds</h2>
        <Notice>{notice}</Notice>
        {refunds.isPending ? (
          <Loading what="the refunds" />
        ) : (
          <>
            <ErrorNote error={refunds.error} />
            <p>
              Refunded {money(o, refunds.data?.refunded_total ?? '0')} of {money(o, o.total)}
              {remaining !== null ? `; ${money(o, remaining)} remains refundable.` : '.'}
            </p>
            <DataTable
              caption="Refunds"
              columns={refundColumns}
              data={refunds.data?.refunds ?? []}
              empty="No refunds."
            />
          </>
        )}
        {REFUNDABLE.has(o.status) ? (
          <form
            className="form"
            aria-label="Refund"
            onSubmit={(e) => {
              e.preventDefault();
              void refund();
            }}
          >
            <h3>Refund</h3>
            <ErrorNote error={refundError} title="The refund was refused" />
            <TextField
              label={`Amount (${o.currency})`}
              hint={`${remaining !== null ? `Up to ${money(o, remaining)}. ` : ''}The whole remaining amount refunds the order in full: its licenses then follow the Settings’ refund rule and its subscription is cancelled.`}
              required
              inputMode="decimal"
              autoComplete="off"
              value={amount}
              onChange={(e) => setAmount(e.target.value)}
            />
            <Field label="Reason (optional)" hint="Shown in the order notes; up to 500 characters.">
              {(p) => (
                <input {...p} maxLength={500} value={reason} onChange={(e) => setReason(e.target.value)} />
              )}
            </Field>
            {stocked ? (
              <label className="check">
                <input type="checkbox" checked={restock} onChange={(e) => setRestock(e.target.checked)} /> Put
                the order’s items back in stock on a full refund
              </label>
            ) : null}
            <button type="submit" className="primary" disabled={refunding}>
              Refund
            </button>
          </form>
        ) : (
          <p className="muted">
            {o.status === 'refunded'
              ? 'This order is refunded in full.'
              : `Only a paid order (${orderStatusLabel('processing')} or ${orderStatusLabel('completed')}) can be refunded.`}
          </p>
        )}
      </section>
      <section aria-labelledby="order-notes" className="card">
        <h2 id="order-notes">Notes</h2>
        <Notice>{noteNotice}</Notice>
        {notes.isPending ? (
          <Loading what="the notes" />
        ) : (
          <>
            <ErrorNote error={notes.error} />
            {(notes.data?.notes ?? []).length === 0 ? (
              <p>No notes yet.</p>
            ) : (
              <ol className="order-notes">
                {notes.data!.notes.map((n) => (
                  <li key={n.id} data-kind={n.kind}>
                    <p className="muted">
                      {when(n.created_at)} · {n.kind} · {n.actor?.email ?? 'Tollgate'}
                    </p>
                    <p className="note-body">{n.body}</p>
                  </li>
                ))}
              </ol>
            )}
          </>
        )}
        <form
          className="form"
          aria-label="Add a note"
          onSubmit={(e) => {
            e.preventDefault();
            void addNote();
          }}
        >
          <ErrorNote error={noteError} title="The note was refused" />
          <Field label="New note" hint="Seen by administrators only.">
            {(p) => (
              <textarea
                {...p}
                rows={3}
                maxLength={5000}
                value={note}
                onChange={(e) => setNote(e.target.value)}
              />
            )}
          </Field>
          <button type="submit" disabled={noting}>
            Add note
          </button>
        </form>
      </section>
    </>
  );
}
