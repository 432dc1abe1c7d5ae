import { type OrderFacts, receiptUrl } from './facts.js';
import { button, greeting, html, p, page, type Template, textFooter } from './layout.js';
import { orderSummaryHtml, orderSummaryText } from './order-summary.js';

/** Sent when an administrator marks a bank transfer or cheque order paid (docs/email.md, 'Messages'). */
export const paymentReceived: Template<OrderFacts> = (f, ctx) => {
  const subject = `Payment received for your ${ctx.store_name} order #${f.order_id}`;
  const receipt = receiptUrl(ctx.origin, f);
  const downloads = `${ctx.origin}/account/downloads`;
  const method = f.payment_method_title ? ` by ${f.payment_method_title}` : '';
  const text = `${greeting(f.first_name)}

We have received your payment${method} for order #${f.order_id}.

${orderSummaryText(f)}

Your receipt: ${receipt}
Download your software: ${downloads}
${textFooter(ctx)}`;
  const body = html`${p(greeting(f.first_name))}${p(`We have received your payment${method} for order #${f.order_id}.`)}
${orderSummaryHtml(ctx, f)}
${button(ctx, downloads, 'Download your software')}
<p style="margin:0 0 12px"><a href="${receipt}">View your receipt</a></p>`;
  return { subject, text, html: page(ctx, 'Payment received', body) };
};
