import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { availableCurrencies } from '../modules/catalogue/currency.js';
import { fromMinor } from '../modules/catalogue/money.js';
import type { PaymentService } from '../modules/checkout/payment.service.js';
import { renderPdf } from '../modules/invoices/invoices.pdf.js';
import type { InvoicesService } from '../modules/invoices/invoices.service.js';
import type { LicenseService } from '../modules/licensing/license.service.js';
import type { OrdersService } from '../modules/orders/orders.service.js';
import type { SettingsService } from '../modules/settings/settings.service.js';
import { accountNav } from './account-nav.js';
import { signInUrl, viewerOf } from './forms.js';
import { html } from './html.js';
import { seeOther, sendPage, type Viewer } from './layout.js';
import { orderStatusLabel } from './status-labels.js';
import { howToPay, onHoldNote, orderTable, PAID } from './store/checkout.js';

export interface OrdersPagesOptions {
  orders: OrdersService;
  invoices: InvoicesService;
  payments: PaymentService;
  licenses: LicenseService;
  settings: SettingsService;
}

/** Orders per page of My orders. */
export const ORDERS_PER_PAGE = 20;
const PAGE_PARAM = /^[1-9][0-9]{0,5}$/;
const ORDER_ID = /^[1-9][0-9]{0,9}$/;

function notFound(reply: FastifyReply, viewer: Viewer, status: 400 | 404, title: string) {
  return sendPage(
    reply,
    status,
    title,
    html`<section class="card"><h1>${title}</h1><p><a href="/account/orders">See your orders</a></p></section>`,
    viewer,
  );
}

/**
 * "My orders" (/account/orders, paged by the server: one query for the page and one for the count,
 * on the orders_customer index) and one order (/account/orders/<id>, the receipt's data, for its
 * owner only) (docs/storefront.md, 'My orders').
 */
export async function ordersPages(app: FastifyInstance, opts: OrdersPagesOptions) {
  const { orders, invoices, payments, licenses, settings } = opts;

  app.get('/account/orders', async (request, reply) => {
    const viewer = viewerOf(request);
    if (!viewer) return seeOther(reply, signInUrl('/account/orders'));
    const raw = (request.query as Record<string, unknown>).page;
    if (raw !== undefined && (typeof raw !== 'string' || !PAGE_PARAM.test(raw))) {
      return notFound(reply, viewer, 400, 'There is no such page of orders');
    }
    const page = raw === undefined ? 1 : Number(raw);
    const { rows, total } = await orders.listForCustomer(viewer.user.id, page, ORDERS_PER_PAGE);
    const pages = Math.max(1, Math.ceil(total / ORDERS_PER_PAGE));
    if (page > pages) return notFound(reply, viewer, 404, 'There is no such page of orders');
    const body = html`${accountNav('orders')}
<h1>My orders</h1>
${
  rows.length === 0
    ? html`<section class="card"><p>You have no orders yet. <a href="/">See the products</a></p></section>`
    : html`<section class="card"><div class="table-wrap" role="region" aria-label="Orders" tabindex="0"><table>
  <thead><tr><th scope="col">Order</th><th scope="col">Date (UTC)</th><th scope="col">Status</th><th scope="col">Total</th></tr></thead>
  <tbody>${rows.map(
    (o) => html`<tr>
    <td><a href="/account/orders/${o.id}">#${o.id}</a></td>
    <td class="when">${o.created_at.slice(0, 10)}</td>
    <td>${orderStatusLabel(o.status)}</td>
    <td>${o.currency_symbol}${fromMinor(Number(o.total), o.decimals)} ${o.currency}</td>
  </tr>`,
  )}</tbody>
</table></div>
${
  pages > 1
    ? html`<nav class="actions" aria-label="Pages">
  ${page > 1 ? html`<a rel="prev" href="/account/orders${page === 2 ? '' : `?page=${page - 1}`}">Previous page</a>` : ''}
  <span class="muted">Page ${page} of ${pages}</span>
  ${page < pages ? html`<a rel="next" href="/account/orders?page=${page + 1}">Next page</a>` : ''}
</nav>`
    : ''
}</section>`
}`;
    return sendPage(reply, 200, 'My orders', body, viewer);
  });

  app.get('/account/orders/:id', async (request, reply) => {
    const viewer = viewerOf(request);
    const rawId = (request.params as { id: string }).id;
    if (!viewer) return seeOther(reply, signInUrl('/account/orders'));
    if (!ORDER_ID.test(rawId) || Number(rawId) > 2147483647) {
      return notFound(reply, viewer, 404, 'Order not found');
    }
    const r = await payments.receipt(Number(rawId), undefined, viewer.user);
    // Another customer's order and an unknown one look the same. An administrator reads orders in
    // the console; here, only the customer's own.
    const row = 'error' in r ? undefined : await orders.find(r.id);
    if ('error' in r || !row || row.customer_id !== viewer.user.id) {
      return notFound(reply, viewer, 404, 'Order not found');
    }
    const s = await settings.get();
    const decimals = availableCurrencies(s).find((c) => c.code === r.currency)?.decimals ?? 2;
    const receipt = { ...r, decimals };
    const instructions = await payments.paymentInstructions(r.id);
    const issued = PAID.has(r.status)
      ? (await licenses.list({ order_id: r.id, sort: 'id', order: 'asc' }, 1, 100)).licenses
      : [];
    const documents = await invoices.list(row.id);
    const body = html`<p><a href="/account/orders">← My orders</a></p>
<h1>Order #${r.number}</h1>
<section class="card receipt">
  <p><span class="muted">Status:</span> <strong data-status="${r.status}">${orderStatusLabel(r.status)}</strong>
  · <span class="muted">Payment:</span> ${r.payment_method || 'none yet'}</p>
  ${onHoldNote(r.status)}
  ${orderTable(receipt)}
  ${Number(row.refunded_total) > 0 ? html`<p class="refunded"><span class="muted">Refunded:</span> <strong>${fromMinor(Number(row.refunded_total), row.decimals)}</strong> ${r.currency}</p>` : ''}
</section>
${howToPay(instructions, r.number)}
${
  documents.length > 0
    ? html`<section class="card"><h2>Invoices</h2>
  <ul class="invoices">${documents.map((d) => html`<li><a href="/account/orders/${row.id}/${d.kind === 'invoice' ? 'invoice.pdf' : `credit-notes/${d.id}/pdf`}" download>${d.kind === 'invoice' ? 'Invoice' : 'Credit note'} ${d.number}</a> (${d.total} ${d.currency})</li>`)}</ul></section>`
    : ''
}
${
  issued.length > 0
    ? html`<section class="card"><h2>License keys</h2>
  <ul class="keys">${issued.map((l) => html`<li><span class="product">${l.product_name}${l.variation_name ? ` – ${l.variation_name}` : ''}</span> <code class="license-key">${l.license_key}</code></li>`)}</ul>
  <p>Their sites are under <a href="/account/licenses">My licenses</a>.</p></section>`
    : ''
}`;
    return sendPage(reply, 200, `Order #${r.number}`, body, viewer);
  });

  // The buyer's own invoice and credit notes; another customer's order looks like an unknown one.
  const document = async (request: FastifyRequest, reply: FastifyReply, kind: 'invoice' | 'credit_note') => {
    const viewer = viewerOf(request);
    const params = request.params as { id: string; note_id?: string };
    if (!viewer) return seeOther(reply, signInUrl('/account/orders'));
    const ids = [params.id, params.note_id ?? '1'];
    if (ids.some((id) => !ORDER_ID.test(id) || Number(id) > 2147483647)) {
      return notFound(reply, viewer, 404, 'Invoice not found');
    }
    const row = await orders.find(Number(params.id));
    if (!row || row.customer_id !== viewer.user.id) return notFound(reply, viewer, 404, 'Invoice not found');
    const doc = await invoices.find(
      row.id,
      kind,
      params.note_id === undefined ? undefined : Number(params.note_id),
    );
    if (!doc) return notFound(reply, viewer, 404, 'Invoice not found');
    return reply
      .type('application/pdf')
      .header('Content-Disposition', `attachment; filename="${doc.number}.pdf"`)
      .send(Buffer.from(await renderPdf(doc)));
  };
  app.get('/account/orders/:id/invoice.pdf', (request, reply) => document(request, reply, 'invoice'));
  app.get('/account/orders/:id/credit-notes/:note_id/pdf', (request, reply) =>
    document(request, reply, 'credit_note'),
  );
}
