import type { AccountFacts } from './facts.js';
import { notice, type Template } from './layout.js';

/** Sent on a sign-in link request (docs/email.md, 'Messages'); `ctx.link` signs in once, within 15 minutes. */
export const signInLink: Template<AccountFacts> = (f, ctx) =>
  notice(ctx, {
    subject: `Sign in to ${ctx.store_name}`,
    title: 'Sign in',
    first_name: f.first_name,
    line: 'Someone asked for a link to sign in to your account. If it was you, sign in within 15 minutes:',
    link: ctx.link,
    button: 'Sign in',
    after: 'The link works once. If you did not ask, ignore this email: nobody can sign in without it.',
  });
