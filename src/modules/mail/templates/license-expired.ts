import { day, type LicenseExpiryFacts } from './facts.js';
import { notice, type Template } from './layout.js';

/** Sent when a license's usage expiry has passed (docs/email.md, 'Messages'). */
export const licenseExpired: Template<LicenseExpiryFacts> = (f, ctx) =>
  notice(ctx, {
    subject: `Your ${f.product} license has expired`,
    title: 'License expired',
    first_name: f.first_name,
    line: `Your ${f.product} license (key ending ${f.key_end}) expired on ${day(f.expires_at)}. Renew it to receive updates again.`,
    link: `${ctx.origin}/account/licenses`,
    button: 'Your licenses',
    label: 'Your licenses',
  });
