import { day, payUrl, type RenewalFacts } from './facts.js';
import { button, greeting, html, p, page, type Template, textFooter } from './layout.js';

/** Sent when a subscription's renewal order is created (docs/email.md, 'Messages'), with its pay link. */
export const renewalDue: Template<RenewalFacts> = (f, ctx) => {
  const subject = `Your ${f.product} renewal is due`;
  const pay = payUrl(ctx.origin, f);
  const due = f.due_at ? ` on ${day(f.due_at)}` : '';
  const line = `The renewal of your ${f.product} subscription is due${due}: ${f.total} (order #${f.order_id}).`;
  const text = `${greeting(f.first_name)}

${line}

Pay the renewal: ${pay}
${textFooter(ctx)}`;
  const body = html`${p(greeting(f.first_name))}${p(line)}${button(ctx, pay, 'Pay the renewal')}`;
  return { subject, text, html: page(ctx, 'Renewal due', body) };
};
