import type { InvoiceSnapshot } from './invoices.service.js';

/** Helvetica's WinAnsi encoding covers Latin-1's printable characters; anything else prints as `?`. */
const printable = (text: string): string => text.replace(/[^\u0020-\u007e\u00a0-\u00ff]/g, '?');

/**
 * Renders an invoice or credit note snapshot as a one-or-more-page A4 PDF. pdf-lib is imported here,
 * on the first document asked for, so a process that never renders one never loads it.
 */
export async function renderPdf(doc: InvoiceSnapshot): Promise<Uint8Array> {
  const { PDFDocument, StandardFonts } = await import('pdf-lib');
  const pdf = await PDFDocument.create();
  const title = doc.kind === 'invoice' ? 'Invoice' : 'Credit note';
  pdf.setTitle(`${title} ${doc.number}`);
  pdf.setCreationDate(new Date(doc.issued_at));
  pdf.setModificationDate(new Date(doc.issued_at));
  const regular = await pdf.embedFont(StandardFonts.Helvetica);
  const bold = await pdf.embedFont(StandardFonts.HelveticaBold);
  const [width, height, margin] = [595.28, 841.89, 50];
  let page = pdf.addPage([width, height]);
  let y = height - margin;
  const line = (text: string, opts: { x?: number; size?: number; strong?: boolean; keep?: boolean } = {}) => {
    const size = opts.size ?? 10;
    if (y < margin + size) {
      page = pdf.addPage([width, height]);
      y = height - margin;
    }
    page.drawText(printable(text), { x: opts.x ?? margin, y, size, font: opts.strong ? bold : regular });
    if (!opts.keep) y -= size + 4;
  };
  const gap = () => {
    y -= 10;
  };

  line(`${title} ${doc.number}`, { size: 18, strong: true });
  line(`Date: ${doc.issued_at.slice(0, 10)}`);
  line(`Order: #${doc.order_id}`);
  if (doc.invoice_number) line(`Credits invoice: ${doc.invoice_number}`);
  if (doc.reason) line(`Reason: ${doc.reason.slice(0, 200)}`);
  gap();
  line('Seller', { strong: true });
  line(doc.seller.name);
  for (const l of doc.seller.address.split('\n').filter(Boolean)) line(l);
  if (doc.seller.tax_number) line(`Tax number: ${doc.seller.tax_number}`);
  gap();
  line('Bill to', { strong: true });
  for (const l of [doc.buyer.name, doc.buyer.company, ...doc.buyer.address, doc.buyer.email].filter(Boolean))
    line(l);
  if (doc.buyer_tax_id) line(`VAT number: ${doc.buyer_tax_id}`);
  gap();

  const cols = [margin, 300, 350, 420, 490];
  const row = (cells: string[], strong = false) => {
    for (const [i, cell] of cells.entries()) line(cell, { x: cols[i], strong, keep: i < cells.length - 1 });
  };
  row(['Item', 'Qty', 'Unit price', 'Tax', 'Total'], true);
  for (const l of doc.lines) row([l.name.slice(0, 45), String(l.quantity), l.unit_price, l.tax, l.total]);
  gap();
  const total = (label: string, value: string, strong = false) =>
    row(['', '', '', label, `${value} ${doc.currency}`], strong);
  total('Subtotal', doc.totals.subtotal);
  if (Number(doc.totals.discount) !== 0) total('Discount', `-${doc.totals.discount}`);
  // The tax per rate, as a VAT invoice must show it; a single-rate order's line is its total.
  for (const t of doc.taxes ?? []) total(`${t.name} ${Number(t.rate)}%`, t.amount);
  total('Tax', doc.totals.tax);
  total('Total', doc.totals.total, true);
  if (doc.prices_include_tax) {
    gap();
    line('Prices include tax.');
  }
  if (doc.reverse_charge) {
    gap();
    line('Reverse charge', { strong: true });
    line('VAT to be accounted for by the recipient (Article 196, Council Directive 2006/112/EC).');
  }
  return pdf.save();
}
