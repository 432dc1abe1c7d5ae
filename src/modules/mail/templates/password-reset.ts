import type { AccountFacts } from './facts.js';
import { button, greeting, html, p, page, type Template, textFooter } from './layout.js';

/** Sent on a forgot-password request (docs/email.md, 'Messages'); `ctx.link` is valid for one hour, once. */
export const passwordReset: Template<AccountFacts> = (f, ctx) => {
  const subject = `Reset your ${ctx.store_name} password`;
  const line =
    'Someone asked to reset the password of your account. If it was you, choose a new password within one hour:';
  const ignore = 'If you did not ask, ignore this email: your password stays as it is.';
  const text = `${greeting(f.first_name)}

${line}

${ctx.link}

${ignore}
${textFooter(ctx)}`;
  const body = html`${p(greeting(f.first_name))}${p(line)}${button(ctx, ctx.link, 'Choose a new password')}${p(ignore)}`;
  return { subject, text, html: page(ctx, 'Reset your password', body) };
};
