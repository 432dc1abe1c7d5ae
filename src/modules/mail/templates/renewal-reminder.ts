import { day, type LicenseExpiryFacts } from './facts.js';
import { notice, type Template } from './layout.js';

/**
 * Sent on each of `renewal_reminder_days` around a term license's end (docs/email.md, 'Messages');
 * `ctx.link` is its one-click renewal link, made when the message is sent (docs/selling.md,
 * 'Renewals'). `days` is negative after the end.
 */
export const renewalReminder: Template<LicenseExpiryFacts> = (f, ctx) => {
  const when = day(f.expires_at);
  const license = `Your ${f.product} license (key ending ${f.key_end})`;
  const [subject, line] =
    f.days > 0
      ? [
          `Renew your ${f.product} license: it ends on ${when}`,
          `${license} ends on ${when}, in ${f.days} day${f.days === 1 ? '' : 's'}. Renew it to keep receiving updates.`,
        ]
      : f.days === 0
        ? [
            `Your ${f.product} license ends today`,
            `${license} ends today, ${when}. Renew it to keep receiving updates.`,
          ]
        : [
            `Your ${f.product} license ended on ${when}`,
            `${license} ended on ${when}. Renew it to receive updates again.`,
          ];
  return notice(ctx, {
    subject,
    title: 'Renew your license',
    first_name: f.first_name,
    line,
    link: ctx.link,
    button: 'Renew now',
    label: 'Renew now',
    after:
      'The link opens the renewal order: no sign-in needed. If the license is renewed already, it says so.',
  });
};
