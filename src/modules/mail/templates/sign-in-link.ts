import type { AccountFacts } from './facts.js';
import { button, greeting, html, p, page, type Template, textFooter } from './layout.js';

/** Sent on a sign-in link request (docs/email.md, 'Messages'); `ctx.link` signs in once, within 15 minutes. */
export const signInLink: Template<AccountFacts> = (f, ctx) => {
  const subject = `Sign in to ${ctx.store_name}`;
  const line =
    'Someone asked for a link to sign in to your account. If it was you, sign in within 15 minutes:';
  const once = 'The link works once. If you did not ask, ignore this email: nobody can sign in without it.';
  const text = `${greeting(f.first_name)}

${line}

${ctx.link}

${once}
${textFooter(ctx)}`;
  const body = html`${p(greeting(f.first_name))}${p(line)}${button(ctx, ctx.link, 'Sign in')}${p(once)}`;
  return { subject, text, html: page(ctx, 'Sign in', body) };
};
