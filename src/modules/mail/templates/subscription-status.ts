import type { SubscriptionFacts } from './facts.js';
import { button, greeting, html, p, page, type Template, textFooter } from './layout.js';

const STATUS_WORDS: Record<string, string> = {
  active: 'active',
  'on-hold': 'on hold',
  'pending-cancel': 'cancelled at the end of the paid period',
  cancelled: 'cancelled',
  expired: 'expired',
};

const REASON_WORDS: Record<string, string> = {
  payment_received: 'We received your payment.',
  renewal_paid: 'We received your renewal payment.',
  renewal_payment_overdue: 'The renewal payment is overdue.',
  renewal_window_expired: 'The renewal was not paid in time.',
  cancelled_by_customer: 'You cancelled it.',
};

/** Sent when a subscription's status changes (docs/email.md, 'Messages'). */
export const subscriptionStatus: Template<SubscriptionFacts> = (f, ctx) => {
  const status = STATUS_WORDS[f.status] ?? f.status;
  const subject = `Your ${f.product} subscription is ${status}`;
  const line = `Your ${f.product} subscription #${f.subscription_id} is now ${status}.`;
  const reason = REASON_WORDS[f.reason] ?? '';
  const account = `${ctx.origin}/account/subscriptions`;
  const text = `${greeting(f.first_name)}

${line}${reason ? ` ${reason}` : ''}

Your subscriptions: ${account}
${textFooter(ctx)}`;
  const body = html`${p(greeting(f.first_name))}${p(line)}${reason ? p(reason) : ''}${button(ctx, account, 'Your subscriptions')}`;
  return { subject, text, html: page(ctx, 'Subscription status', body) };
};
