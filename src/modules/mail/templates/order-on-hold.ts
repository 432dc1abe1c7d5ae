import { type OnHoldFacts, receiptUrl } from './facts.js';
import { button, greeting, html, p, page, type Template, textFooter } from './layout.js';
import { orderSummaryHtml, orderSummaryText } from './order-summary.js';

/**
 * Sent when an order waits on hold for a bank transfer or cheque (docs/email.md, 'Messages'):
 * what was ordered, the gateway's payment instructions, the order number as the reference. The
 * license keys follow in "payment received" once the store has the money.
 */
export const orderOnHold: Template<OnHoldFacts> = (f, ctx) => {
  const subject = `Your ${ctx.store_name} order #${f.order_id} is waiting for payment`;
  const receipt = receiptUrl(ctx.origin, f);
  const method = f.payment_method_title ? ` by ${f.payment_method_title}` : '';
  const how = f.instructions
    ? `How to pay:\n${f.instructions}\n\nUse order #${f.order_id} as the payment reference.`
    : `Use order #${f.order_id} as the payment reference.`;
  const text = `${greeting(f.first_name)}

Thank you for your order #${f.order_id}. It is waiting for your payment${method}.

${orderSummaryText(f)}

${how}

Your license keys are emailed to you as soon as the payment has arrived.

Your order: ${receipt}
${textFooter(ctx)}`;
  const body = html`${p(greeting(f.first_name))}${p(`Thank you for your order #${f.order_id}. It is waiting for your payment${method}.`)}
${orderSummaryHtml(ctx, f)}
${
  f.instructions
    ? html`<h2 style="font-size:17px;margin:16px 0 8px">How to pay</h2>
<p style="margin:0 0 12px;white-space:pre-line">${f.instructions}</p>`
    : ''
}
${p(`Use order #${f.order_id} as the payment reference. Your license keys are emailed to you as soon as the payment has arrived.`)}
${button(ctx, receipt, 'View your order')}`;
  return { subject, text, html: page(ctx, 'Waiting for payment', body) };
};
