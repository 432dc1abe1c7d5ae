import { payUrl, type RenewalFacts } from './facts.js';
import { notice, type Template } from './layout.js';

/** Sent when the payment of a renewal order fails (docs/email.md, 'Messages'), with the pay link to try again. */
export const renewalFailed: Template<RenewalFacts> = (f, ctx) =>
  notice(ctx, {
    subject: `The payment for your ${f.product} renewal failed`,
    title: 'Renewal payment failed',
    first_name: f.first_name,
    line: `The payment of ${f.total} for the renewal of your ${f.product} subscription (order #${f.order_id}) did not go through.`,
    link: payUrl(ctx.origin, f),
    button: 'Try the payment again',
    label: 'Try again',
  });
