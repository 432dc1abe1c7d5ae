import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../http/errors.js';
import { type AccountsService, normaliseEmail } from '../modules/accounts/accounts.service.js';
import type { TransferService } from '../modules/licensing/transfer.service.js';
import { formOf, formUser, setSessionCookie, signedOutForm, signInUrl, viewerOf } from './forms.js';
import { html } from './html.js';
import { seeOther, sendPage } from './layout.js';

export interface TransferPagesOptions {
  accounts: AccountsService;
  transfers: TransferService;
  secureCookies: boolean;
}

/** Why a link does not work, in words, by code (the page never shows an internal message). */
const REFUSALS: Record<string, [string, string]> = {
  transfer_not_found: [
    'This transfer link does not work',
    'The transfer was cancelled, replaced by a newer one, or the link is incomplete. Ask the sender for a new one.',
  ],
  transfer_already_accepted: [
    'This transfer was already accepted',
    'The license is in the receiving account.',
  ],
  transfer_expired: [
    'This transfer link has expired',
    'Transfer links work for 7 days. Ask the sender for a new one.',
  ],
  license_not_transferable: [
    'This license cannot be transferred',
    'It was revoked or suspended. Contact the store.',
  ],
  transfer_wrong_account: [
    'This transfer is for another account',
    'Sign out, then open the link from the email again.',
  ],
};

/**
 * Accepting a license transfer (docs/selling.md, 'Transfers'): the emailed link's page shows the
 * offer and an Accept button (a GET changes nothing, so a mail scanner opening the link accepts
 * nothing). Accepting moves the license to the account of the offer's email, made now if there is
 * none, and signs a signed-out receiver in to it as a sign-in link does (src/pages/sign-in-link.ts).
 * The token stays out of logs (src/http/redact.ts masks `token=`) and Referer headers.
 */
export async function transferPages(app: FastifyInstance, opts: TransferPagesOptions) {
  const { accounts, transfers, secureCookies } = opts;
  const csrf = signedOutForm(secureCookies);

  function refused(request: FastifyRequest, reply: FastifyReply, e: unknown) {
    if (!(e instanceof ApiError) || !REFUSALS[e.code]) throw e;
    const [title, text] = REFUSALS[e.code]!;
    const body = html`<section class="card narrow">
  <h1>${title}</h1>
  <p class="error" role="alert" data-code="${e.code}">${text}</p>
  <p><a href="/account/licenses">Go to My licenses</a></p>
</section>`;
    return sendPage(reply, e.status, title, body, viewerOf(request));
  }

  app.get('/account/transfers/accept', async (request, reply) => {
    const token = (request.query as Record<string, unknown>).token;
    const text = typeof token === 'string' ? token : '';
    const viewer = viewerOf(request);
    try {
      const offer = await transfers.preview(text);
      if (viewer && normaliseEmail(viewer.user.email) !== offer.to_email) {
        throw new ApiError('transfer_wrong_account');
      }
      const product = offer.product_name ?? 'software';
      const hidden = viewer
        ? html`<input type="hidden" name="_nonce" value="${viewer.nonce}">`
        : html`<input type="hidden" name="_csrf" value="${csrf.token(request, reply)}">`;
      const body = html`<section class="card narrow">
  <h1>Accept a ${product} license</h1>
  <p>${offer.from_email ?? 'The store'} offers you their ${product} license.</p>
  <dl class="facts">
    <dt>For the account of</dt><dd>${offer.to_email}</dd>
    <dt>Sites</dt><dd>${offer.keep_activations === 1 ? 'Stay activated' : 'Deactivated when you accept: activate your own with the license key'}</dd>
    <dt>Link valid until</dt><dd>${offer.expires_at.slice(0, 10)}</dd>
  </dl>
  <form method="post" action="/account/transfers/accept">
    ${hidden}
    <input type="hidden" name="token" value="${text}">
    <button type="submit" class="primary full">Accept the license</button>
  </form>
  <p class="muted">${viewer ? '' : 'Accepting signs you in to this account; one is made for the address if it has none.'} If you do not want the license, close this page.</p>
</section>`;
      return sendPage(reply, 200, `Accept a ${product} license`, body, viewer);
    } catch (e) {
      return refused(request, reply, e);
    }
  });

  app.post('/account/transfers/accept', async (request, reply) => {
    const token = formOf(request).token ?? '';
    // A signed-in receiver's form carries the session nonce; a signed-out one's the double-submit token.
    const signedIn = await formUser(request, accounts);
    if (!signedIn && !csrf.ok(request)) throw new ApiError('rest_cookie_invalid_nonce');
    try {
      const { user } = await transfers.accept(token, signedIn ?? undefined);
      if (signedIn) return seeOther(reply, '/account/licenses?notice=transfer_accepted');
      // An administrator signs in with a password, never by a link (as the sign-in link says).
      if (user.role !== 'customer') return seeOther(reply, signInUrl('/account/licenses'));
      const { sessionId } = await accounts.startSession(user.id);
      setSessionCookie(reply, sessionId, secureCookies);
      return seeOther(reply, '/account/licenses?notice=transfer_accepted');
    } catch (e) {
      return refused(request, reply, e);
    }
  });
}
