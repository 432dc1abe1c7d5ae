import type { AccountFacts } from './facts.js';
import { button, greeting, html, p, page, type Template, textFooter } from './layout.js';

/** Sent when checkout creates an account (docs/email.md, 'Messages'); `ctx.link` sets its password, valid 7 days, once. */
export const accountCreated: Template<AccountFacts> = (f, ctx) => {
  const subject = `Your ${ctx.store_name} account`;
  const line = `We created an account for you with your order. Set your password to sign in and see your licenses, downloads and orders:`;
  const later = `The link works for 7 days. After that, use "Forgot your password?" on ${ctx.origin}/account/sign-in.`;
  const text = `${greeting(f.first_name)}

${line}

${ctx.link}

${later}
${textFooter(ctx)}`;
  const body = html`${p(greeting(f.first_name))}${p(line)}${button(ctx, ctx.link, 'Set your password')}${p(later)}`;
  return { subject, text, html: page(ctx, 'Welcome', body) };
};
