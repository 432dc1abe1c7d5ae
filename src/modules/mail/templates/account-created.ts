import type { AccountFacts } from './facts.js';
import { notice, type Template } from './layout.js';

/** Sent when checkout creates an account (docs/email.md, 'Messages'); `ctx.link` sets its password, valid 7 days, once. */
export const accountCreated: Template<AccountFacts> = (f, ctx) =>
  notice(ctx, {
    subject: `Your ${ctx.store_name} account`,
    title: 'Welcome',
    first_name: f.first_name,
    line: `We created an account for you with your order. Set your password to sign in and see your licenses, downloads and orders:`,
    link: ctx.link,
    button: 'Set your password',
    after: `The link works for 7 days. After that, use "Forgot your password?" on ${ctx.origin}/account/sign-in.`,
  });
