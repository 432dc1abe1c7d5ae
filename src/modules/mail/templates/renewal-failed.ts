import { payUrl, type RenewalFacts } from './facts.js';
import { button, greeting, html, p, page, type Template, textFooter } from './layout.js';

/** Sent when the payment of a renewal order fails (docs/email.md, 'Messages'), with the pay link to try again. */
export const renewalFailed: Template<RenewalFacts> = (f, ctx) => {
  const subject = `The payment for your ${f.product} renewal failed`;
  const pay = payUrl(ctx.origin, f);
  const line = `The payment of ${f.total} for the renewal of your ${f.product} subscription (order #${f.order_id}) did not go through.`;
  const text = `${greeting(f.first_name)}

${line}

Try again: ${pay}
${textFooter(ctx)}`;
  const body = html`${p(greeting(f.first_name))}${p(line)}${button(ctx, pay, 'Try the payment again')}`;
  return { subject, text, html: page(ctx, 'Renewal payment failed', body) };
};
