import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AccountsService } from '../modules/accounts/accounts.service.js';
import { viewerOf } from './forms.js';
import { type Html, html } from './html.js';
import { sendPage } from './layout.js';

/**
 * What the forgot-password and sign-in link pages say when the store cannot email (no SMTP server
 * set, or its last sending failed: docs/email.md, 'When mail is not available'): never "check your
 * email", but what the buyer can do instead. A signed-in buyer whose account has no password yet is
 * sent to set one now, before the session ends.
 */
async function noMailNotice(request: FastifyRequest, accounts: AccountsService, what: string): Promise<Html> {
  const store = request.storeIdentity?.name ?? 'the store';
  const user = request.user;
  const newBuyer = user ? !(await accounts.hasPassword(user.id)) : false;
  return html`<section class="card narrow" data-mail="unavailable">
  <h1>Email is not available</h1>
  <p role="status">${store} cannot send email at the moment, so it cannot send you ${what}.</p>
  ${
    newBuyer
      ? html`<p>You are signed in, and your account has no password yet. Set one now, so you can sign in again later.</p>
  <p><a class="button primary" href="/account/profile">Set a password now</a></p>`
      : ''
  }
  <h2>What you can do</h2>
  <ul>
    <li>If you know your password, <a href="/account/sign-in">sign in with it</a>.</li>
    <li>Otherwise, contact ${store} and ask them to help you into your account. Tell them the email address you bought with.</li>
  </ul>
</section>`;
}

/** Sends the notice as the whole page: 200 to a GET, 503 to a form posted while mail is down. */
export async function sendNoMailPage(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  accounts: AccountsService,
  what: string,
) {
  return sendPage(
    reply,
    status,
    'Email is not available',
    await noMailNotice(request, accounts, what),
    viewerOf(request),
  );
}
