import { day, payUrl, type RenewalFacts } from './facts.js';
import { button, greeting, html, p, page, type Template, textFooter } from './layout.js';

/** Sent when a subscription's renewal order is created (docs/email.md, 'Messages'), with its pay link. */
export const renewalDue: Template<RenewalFacts> = (f, ctx) => {
  const subject = `Your ${f.product} renewal is due`;
  const pay = payUrl(ctx.origin, f);
  const due = f.due_at ? ` on ${day(f.due_at)}` : '';
  const line = `The renewal of your ${f.product} subscription is due${due}: ${f.total} (order #${f.order_id}).`;
  const how =
    f.card === undefined
      ? null
      : f.card === null
        ? 'No card is kept for it: pay it with the link below.'
        : `It will be charged to ${f.card.startsWith('the ') ? f.card : `your ${f.card}`}; there is nothing to do. To pay with another card, use the link below.`;
  const action = f.card ? 'Pay with another card' : 'Pay the renewal';
  const text = `${greeting(f.first_name)}

${line}${how ? `\n\n${how}` : ''}

${action}: ${pay}
${textFooter(ctx)}`;
  const body = html`${p(greeting(f.first_name))}${p(line)}${how ? p(how) : ''}${button(ctx, pay, action)}`;
  return { subject, text, html: page(ctx, 'Renewal due', body) };
};
