import { day, type LicenseExpiryFacts } from './facts.js';
import { notice, type Template } from './layout.js';

/** Sent license_expiring_days before a license's usage expiry (docs/email.md, 'Messages'). */
export const licenseExpiring: Template<LicenseExpiryFacts> = (f, ctx) =>
  notice(ctx, {
    subject: `Your ${f.product} license expires on ${day(f.expires_at)}`,
    title: 'License expiring',
    first_name: f.first_name,
    line: `Your ${f.product} license (key ending ${f.key_end}) expires on ${day(f.expires_at)}, in ${f.days} day${f.days === 1 ? '' : 's'}. Renew it to keep receiving updates.`,
    link: `${ctx.origin}/account/licenses`,
    button: 'Your licenses',
    label: 'Your licenses',
  });
