import type { OrderFacts } from './facts.js';
import { html, type MailContext } from './layout.js';

/** The items, total and license keys of an order, as text and as HTML (receipt and payment received). */
export function orderSummaryText(f: OrderFacts): string {
  const lines = f.items.map((i) => `- ${i.name} × ${i.quantity}: ${i.total}`);
  lines.push(`Total: ${f.total}`);
  if (f.licenses.length > 0) {
    lines.push('', 'Your license keys:');
    for (const l of f.licenses) lines.push(`- ${l.product}: ${l.key}`);
    lines.push('', "To activate, enter the key in the product's license settings on your site.");
  }
  return lines.join('\n');
}

export function orderSummaryHtml(_ctx: MailContext, f: OrderFacts) {
  const cell = 'padding:6px 0;border-bottom:1px solid #e4e4e7';
  return html`<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="margin:0 0 16px;border-collapse:collapse">
${f.items.map((i) => html`<tr><td style="${cell}">${i.name} × ${i.quantity}</td><td align="right" style="${cell}">${i.total}</td></tr>`)}
<tr><td style="padding:6px 0;font-weight:bold">Total</td><td align="right" style="padding:6px 0;font-weight:bold">${f.total}</td></tr>
</table>
${
  f.licenses.length > 0
    ? html`<h2 style="font-size:17px;margin:16px 0 8px">Your license keys</h2>
<ul style="padding-left:20px;margin:0 0 12px">${f.licenses.map(
        (l) =>
          html`<li>${l.product}: <code style="font-family:ui-monospace,Menlo,Consolas,monospace;background:#f4f4f5;padding:2px 4px">${l.key}</code></li>`,
      )}</ul>
<p style="margin:0 0 12px">To activate, enter the key in the product's license settings on your site.</p>`
    : ''
}`;
}
