import type { AccountFacts } from './facts.js';
import { notice, type Template } from './layout.js';

/** Sent on a forgot-password request (docs/email.md, 'Messages'); `ctx.link` is valid for one hour, once. */
export const passwordReset: Template<AccountFacts> = (f, ctx) =>
  notice(ctx, {
    subject: `Reset your ${ctx.store_name} password`,
    title: 'Reset your password',
    first_name: f.first_name,
    line: 'Someone asked to reset the password of your account. If it was you, choose a new password within one hour:',
    link: ctx.link,
    button: 'Choose a new password',
    after: 'If you did not ask, ignore this email: your password stays as it is.',
  });
