import { Type } from 'typebox';
import { requireAdmin } from '../../http/auth.js';
import { IdParams } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { renderPdf } from './invoices.pdf.js';
import type { InvoicesService } from './invoices.service.js';

/** One document of an order's list (InvoiceView). */
const InvoiceListItem = Type.Object({
  id: Type.Integer(),
  kind: Type.Union([Type.Literal('invoice'), Type.Literal('credit_note')]),
  number: Type.String(),
  order_id: Type.Integer(),
  refund_id: Type.Union([Type.Integer(), Type.Null()]),
  invoice_number: Type.Union([Type.String(), Type.Null()]),
  total: Type.String({ description: "Decimal in the order's currency" }),
  currency: Type.String(),
  issued_at: Type.String(),
});

const tags = ['orders'];
const NoteParams = Type.Object({
  id: Type.Integer({ minimum: 1, maximum: 2147483647 }),
  note_id: Type.Integer({ minimum: 1, maximum: 2147483647 }),
});

/** An order's invoice and credit notes for the administrator (docs/invoices.md). */
export async function invoicesRoutes(app: App, opts: { invoices: InvoicesService }) {
  const { invoices } = opts;

  app.get(
    '/orders/:id/invoices',
    {
      preValidation: requireAdmin,
      schema: {
        tags,
        summary: "The order's invoice and credit notes, oldest first (administrator)",
        params: IdParams,
        response: { 200: Type.Array(InvoiceListItem) },
      },
    },
    async (request) => invoices.list(request.params.id),
  );

  app.get(
    '/orders/:id/invoice.pdf',
    {
      preValidation: requireAdmin,
      schema: {
        tags,
        summary: "The order's invoice as a PDF (administrator); 404 invoice_not_found before payment",
        params: IdParams,
      },
    },
    async (request, reply) => {
      const doc = await invoices.document(request.params.id, 'invoice');
      return reply
        .type('application/pdf')
        .header('Content-Disposition', `inline; filename="${doc.number}.pdf"`)
        .send(Buffer.from(await renderPdf(doc)));
    },
  );

  app.get(
    '/orders/:id/credit-notes/:note_id/pdf',
    {
      preValidation: requireAdmin,
      schema: { tags, summary: 'One credit note of the order as a PDF (administrator)', params: NoteParams },
    },
    async (request, reply) => {
      const doc = await invoices.document(request.params.id, 'credit_note', request.params.note_id);
      return reply
        .type('application/pdf')
        .header('Content-Disposition', `inline; filename="${doc.number}.pdf"`)
        .send(Buffer.from(await renderPdf(doc)));
    },
  );
}
