import { day, type LicenseExpiryFacts } from './facts.js';
import { button, greeting, html, p, page, type Template, textFooter } from './layout.js';

/** Sent when a license's usage expiry has passed (docs/email.md, 'Messages'). */
export const licenseExpired: Template<LicenseExpiryFacts> = (f, ctx) => {
  const subject = `Your ${f.product} license has expired`;
  const line = `Your ${f.product} license (key ending ${f.key_end}) expired on ${day(f.expires_at)}. Renew it to receive updates again.`;
  const account = `${ctx.origin}/account/licenses`;
  const text = `${greeting(f.first_name)}

${line}

Your licenses: ${account}
${textFooter(ctx)}`;
  const body = html`${p(greeting(f.first_name))}${p(line)}${button(ctx, account, 'Your licenses')}`;
  return { subject, text, html: page(ctx, 'License expired', body) };
};
