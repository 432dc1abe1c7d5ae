import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../http/errors.js';
import type { SignedOutPagesOptions } from './forms.js';
import { formOf, safeNext, setSessionCookie, signedOutForm } from './forms.js';
import { html } from './html.js';
import { seeOther, sendPage } from './layout.js';
import { sendNoMailPage } from './no-mail.js';

/**
 * The one-time sign-in link (docs/storefront.md, 'Sign-in link'): a form that asks for the email
 * address (the same answer whether or not it has an account), and the emailed link's address,
 * which uses the link once and signs in as the sign-in form does. Without working mail the form
 * says so instead of promising an email. The token stays out of logs (src/http/redact.ts masks
 * `token=`) and out of Referer headers (the pages send no-referrer).
 */
export async function signInLinkPages(app: FastifyInstance, opts: SignedOutPagesOptions) {
  const { accounts, secureCookies } = opts;
  const csrf = signedOutForm(secureCookies);
  const what = 'a sign-in link';

  function form(
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    fields: { email?: string; code?: string; error?: string } = {},
  ) {
    const body = html`<section class="card narrow">
  <h1>Sign in with a link</h1>
  <p class="muted">Enter the email address you bought with. We will email you a link that signs you in once, within 15 minutes: no password needed.</p>
  ${fields.error ? html`<p class="error" role="alert" data-code="${fields.code ?? ''}">${fields.error}</p>` : ''}
  <form method="post" action="/account/sign-in-link">
    <input type="hidden" name="_csrf" value="${csrf.token(request, reply)}">
    <label for="email">Email address</label>
    <input id="email" name="email" type="email" autocomplete="email" required maxlength="254" value="${fields.email ?? ''}">
    <button type="submit" class="primary full">Email me a sign-in link</button>
  </form>
  <p class="muted"><a href="/account/sign-in">Sign in with a password</a></p>
</section>`;
    return sendPage(reply, status, 'Sign in with a link', body);
  }

  app.get('/account/sign-in-link', async (request, reply) => {
    if (!(await opts.mailAvailable())) {
      return sendNoMailPage(request, reply, 200, accounts, what);
    }
    return form(request, reply, 200);
  });

  app.post('/account/sign-in-link', async (request, reply) => {
    const email = (formOf(request).email ?? '').trim().slice(0, 254);
    if (!csrf.ok(request)) {
      return form(request, reply, 403, {
        email,
        code: 'rest_cookie_invalid_nonce',
        error: 'This form has expired. Please enter your email address again.',
      });
    }
    if (!email) {
      return form(request, reply, 400, {
        email,
        code: 'rest_missing_param',
        error: 'Enter your email address.',
      });
    }
    // Nothing is asked for while no email can leave: the buyer reads what to do instead.
    if (!(await opts.mailAvailable())) {
      return sendNoMailPage(request, reply, 503, accounts, what);
    }
    try {
      await accounts.requestSignInLink(email, request.ip);
    } catch (e) {
      if (!(e instanceof ApiError) || e.code !== 'too_many_sign_in_links') throw e;
      return form(request, reply, 429, {
        email,
        code: e.code,
        error: 'Too many sign-in links were asked for. Please wait 15 minutes and try again.',
      });
    }
    // The same answer whether or not the address has an account.
    const body = html`<section class="card narrow">
  <h1>Check your email</h1>
  <p class="notice" role="status">If ${email} has an account with this store, we have sent it a sign-in link. The link works once, for 15 minutes.</p>
  <p class="muted">Nothing arrived? Check your spam folder, or <a href="/account/sign-in-link">ask again</a>.</p>
</section>`;
    return sendPage(reply, 202, 'Check your email', body);
  });

  app.get('/account/sign-in-link/claim', async (request, reply) => {
    const token = (request.query as Record<string, unknown>).token;
    try {
      const { sessionId } = await accounts.claimSignInLink(typeof token === 'string' ? token : '');
      setSessionCookie(reply, sessionId, secureCookies);
      // The account's first page, as a sign-in without a `next` lands.
      return seeOther(reply, safeNext(undefined));
    } catch (e) {
      if (!(e instanceof ApiError) || e.code !== 'invalid_sign_in_token') throw e;
    }
    const body = html`<section class="card narrow">
  <h1>This sign-in link is invalid or has expired</h1>
  <p class="error" role="alert" data-code="invalid_sign_in_token">Sign-in links work once, for 15 minutes.</p>
  <p><a href="/account/sign-in-link">Ask for a new link</a> or <a href="/account/sign-in">sign in with a password</a>.</p>
</section>`;
    return sendPage(reply, 400, 'Sign-in link invalid or expired', body);
  });
}
