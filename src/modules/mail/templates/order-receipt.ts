import { type OrderFacts, receiptUrl } from './facts.js';
import { button, greeting, html, p, page, type Template, textFooter } from './layout.js';
import { orderSummaryHtml, orderSummaryText } from './order-summary.js';

/** Sent when a checkout order is paid (docs/email.md, 'Messages'): its license keys and where to download. */
export const orderReceipt: Template<OrderFacts> = (f, ctx) => {
  const subject = `Your ${ctx.store_name} order #${f.order_id}`;
  const receipt = receiptUrl(ctx.origin, f);
  const downloads = `${ctx.origin}/account/downloads`;
  const text = `${greeting(f.first_name)}

Thank you for your order #${f.order_id}. It is paid.

${orderSummaryText(f)}

Your receipt: ${receipt}
Download your software: ${downloads}
${textFooter(ctx)}`;
  const body = html`${p(greeting(f.first_name))}${p(`Thank you for your order #${f.order_id}. It is paid.`)}
${orderSummaryHtml(ctx, f)}
${button(ctx, downloads, 'Download your software')}
<p style="margin:0 0 12px"><a href="${receipt}">View your receipt</a></p>`;
  return { subject, text, html: page(ctx, `Order #${f.order_id}`, body) };
};
