import { type RenewalFacts, receiptUrl } from './facts.js';
import { greeting, html, p, page, type Template, textFooter } from './layout.js';

/** Sent when a renewal order is paid (docs/email.md, 'Messages'). */
export const renewalPaid: Template<RenewalFacts> = (f, ctx) => {
  const subject = `Your ${f.product} subscription is renewed`;
  const receipt = receiptUrl(ctx.origin, f);
  const line = `Thank you: we have received ${f.total} for the renewal of your ${f.product} subscription (order #${f.order_id}). Your licenses keep working.`;
  const text = `${greeting(f.first_name)}

${line}

Your receipt: ${receipt}
${textFooter(ctx)}`;
  const body = html`${p(greeting(f.first_name))}${p(line)}<p style="margin:0 0 12px"><a href="${receipt}">View your receipt</a></p>`;
  return { subject, text, html: page(ctx, 'Subscription renewed', body) };
};
