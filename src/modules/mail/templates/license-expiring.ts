import { day, type LicenseExpiryFacts } from './facts.js';
import { button, greeting, html, p, page, type Template, textFooter } from './layout.js';

/** Sent license_expiring_days before a license's usage expiry (docs/email.md, 'Messages'). */
export const licenseExpiring: Template<LicenseExpiryFacts> = (f, ctx) => {
  const subject = `Your ${f.product} license expires on ${day(f.expires_at)}`;
  const line = `Your ${f.product} license (key ending ${f.key_end}) expires on ${day(f.expires_at)}, in ${f.days} day${f.days === 1 ? '' : 's'}. Renew it to keep receiving updates.`;
  const account = `${ctx.origin}/account/licenses`;
  const text = `${greeting(f.first_name)}

${line}

Your licenses: ${account}
${textFooter(ctx)}`;
  const body = html`${p(greeting(f.first_name))}${p(line)}${button(ctx, account, 'Your licenses')}`;
  return { subject, text, html: page(ctx, 'License expiring', body) };
};
