import { useQuery } from '@tanstack/react-query';
import { api, ok } from '../api';
import { when } from '../format';
import type { Order, OrderInvoice } from '../resources';
import { ErrorNote, Loading } from '../ui/feedback';

/**
 * An order's invoice and credit notes (docs/invoices.md), each a link to its PDF. The session
 * cookie authenticates the download: a GET needs no nonce.
 */
export function OrderInvoices({ order: o }: { order: Order }) {
  const docs = useQuery({
    queryKey: ['order-invoices', o.id],
    queryFn: () => ok(api.GET('/v1/orders/{id}/invoices', { params: { path: { id: o.id } } })),
  });
  const href = (d: OrderInvoice) =>
    d.kind === 'invoice' ? `/v1/orders/${o.id}/invoice.pdf` : `/v1/orders/${o.id}/credit-notes/${d.id}/pdf`;
  return (
    <section aria-labelledby="order-invoices" className="card">
      <h2 id="order-invoices">Invoices</h2>
      {docs.isPending ? (
        <Loading what="the invoices" />
      ) : (
        <>
          <ErrorNote error={docs.error} />
          {(docs.data ?? []).length === 0 ? (
            <p>None yet: the invoice is issued when the order is paid.</p>
          ) : (
            <ul className="order-invoices">
              {docs.data!.map((d) => (
                <li key={d.id} data-kind={d.kind}>
                  <a href={href(d)} download={`${d.number}.pdf`}>
                    {d.kind === 'invoice' ? 'Invoice' : 'Credit note'} {d.number}
                  </a>{' '}
                  <span className="muted">
                    {d.total} {d.currency} · {when(d.issued_at)}
                    {d.invoice_number ? ` · credits ${d.invoice_number}` : ''}
                  </span>
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </section>
  );
}
