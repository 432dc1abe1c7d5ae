import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../http/errors.js';
import type { SignedOutPagesOptions } from './forms.js';
import { formOf, signedOutForm } from './forms.js';
import { html } from './html.js';
import { sendPage } from './layout.js';
import { sendNoMailPage } from './no-mail.js';

/**
 * Forgot password and the emailed link's page (docs/email.md, 'Passwords'): plain forms that work
 * without JavaScript, over POST /v1/auth/password/forgot and /reset's service calls. Without
 * working mail, forgot password says so and what to do instead (src/pages/no-mail.ts). The link's
 * page is also "set your password" for an account made at checkout, with its own heading. The
 * token stays out of the logs (src/http/redact.ts masks `token=`) and out of Referer headers
 * (the pages send no-referrer).
 */
export async function passwordPages(app: FastifyInstance, opts: SignedOutPagesOptions) {
  const { accounts, secureCookies } = opts;
  const csrf = signedOutForm(secureCookies);

  const errorNote = (code: string, text: string) =>
    html`<p class="error" role="alert" data-code="${code}">${text}</p>`;

  function forgotForm(
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    fields: { email?: string; error?: ReturnType<typeof errorNote> } = {},
  ) {
    const body = html`<section class="card narrow">
  <h1>Forgot your password?</h1>
  <p class="muted">Enter the email address of your account. We will email you a link to choose a new password; it works for one hour.</p>
  ${fields.error ?? ''}
  <form method="post" action="/account/forgot-password">
    <input type="hidden" name="_csrf" value="${csrf.token(request, reply)}">
    <label for="email">Email address</label>
    <input id="email" name="email" type="email" autocomplete="email" required maxlength="254" value="${fields.email ?? ''}">
    <button type="submit" class="primary full">Email me a link</button>
  </form>
  <p class="muted"><a href="/account/sign-in">Back to sign in</a></p>
</section>`;
    return sendPage(reply, status, 'Forgot your password?', body);
  }

  const noMail = (request: FastifyRequest, reply: FastifyReply, status: number) =>
    sendNoMailPage(request, reply, status, accounts, 'a link to choose a new password');

  app.get('/account/forgot-password', async (request, reply) =>
    (await opts.mailAvailable()) ? forgotForm(request, reply, 200) : noMail(request, reply, 200),
  );

  app.post('/account/forgot-password', async (request, reply) => {
    const form = formOf(request);
    const email = (form.email ?? '').trim().slice(0, 254);
    if (!csrf.ok(request)) {
      return forgotForm(request, reply, 403, {
        email,
        error: errorNote(
          'rest_cookie_invalid_nonce',
          'This form has expired. Please enter your email address again.',
        ),
      });
    }
    if (!email) {
      return forgotForm(request, reply, 400, {
        email,
        error: errorNote('rest_missing_param', 'Enter your email address.'),
      });
    }
    // Nothing is asked for while no email can leave: the buyer reads what to do instead.
    if (!(await opts.mailAvailable())) return noMail(request, reply, 503);
    try {
      await accounts.requestPasswordReset(email, request.ip);
    } catch (e) {
      if (!(e instanceof ApiError) || e.code !== 'too_many_password_requests') throw e;
      return forgotForm(request, reply, 429, {
        email,
        error: errorNote(e.code, 'Too many requests from your network. Please wait an hour and try again.'),
      });
    }
    // The same answer whether or not the address has an account.
    const body = html`<section class="card narrow">
  <h1>Check your email</h1>
  <p class="notice" role="status">If an account uses ${email}, we have sent it a link to choose a new password. The link works for one hour.</p>
  <p class="muted">Nothing arrived? Check your spam folder, or <a href="/account/forgot-password">ask again</a>.</p>
</section>`;
    return sendPage(reply, 202, 'Check your email', body);
  });

  function invalidLink(reply: FastifyReply) {
    const body = html`<section class="card narrow">
  <h1>This link is invalid or has expired</h1>
  ${errorNote('invalid_password_token', 'Password links work once, for a limited time.')}
  <p><a href="/account/forgot-password">Ask for a new link</a></p>
</section>`;
    return sendPage(reply, 400, 'Link invalid or expired', body);
  }

  function resetForm(
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    token: string,
    purpose: 'reset' | 'welcome',
    error?: ReturnType<typeof errorNote>,
  ) {
    const title = purpose === 'welcome' ? 'Set your password' : 'Choose a new password';
    const intro =
      purpose === 'welcome'
        ? 'We created an account for you with your order. Choose a password to sign in and see your licenses, downloads and orders.'
        : 'Choose a new password for your account. Every device signed in to it will be signed out.';
    const body = html`<section class="card narrow" data-purpose="${purpose}">
  <h1>${title}</h1>
  <p class="muted">${intro}</p>
  ${error ?? ''}
  <form method="post" action="/account/reset-password">
    <input type="hidden" name="_csrf" value="${csrf.token(request, reply)}">
    <input type="hidden" name="token" value="${token}">
    <label for="password">New password</label>
    <input id="password" name="password" type="password" autocomplete="new-password" required minlength="8" maxlength="1024" aria-describedby="password-hint">
    <p class="muted" id="password-hint">At least 8 characters.</p>
    <label for="confirm">Repeat the password</label>
    <input id="confirm" name="confirm" type="password" autocomplete="new-password" required minlength="8" maxlength="1024">
    <button type="submit" class="primary full">${title}</button>
  </form>
</section>`;
    return sendPage(reply, status, title, body);
  }

  app.get('/account/reset-password', async (request, reply) => {
    const token = (request.query as Record<string, unknown>).token;
    const purpose = typeof token === 'string' ? await accounts.passwordTokenPurpose(token) : null;
    if (!purpose || typeof token !== 'string') return invalidLink(reply);
    return resetForm(request, reply, 200, token, purpose);
  });

  app.post('/account/reset-password', async (request, reply) => {
    const form = formOf(request);
    const token = (form.token ?? '').slice(0, 200);
    const purpose = await accounts.passwordTokenPurpose(token);
    if (!purpose) return invalidLink(reply);
    if (!csrf.ok(request)) {
      return resetForm(
        request,
        reply,
        403,
        token,
        purpose,
        errorNote(
          'rest_cookie_invalid_nonce',
          'This form has expired. Please enter your new password again.',
        ),
      );
    }
    const password = form.password ?? '';
    const refusal =
      password.length < 8 || password.length > 1024
        ? errorNote('invalid_password', 'The password must be 8 to 1024 characters.')
        : password !== form.confirm
          ? errorNote('password_mismatch', 'The two passwords are not the same.')
          : null;
    if (refusal) return resetForm(request, reply, 400, token, purpose, refusal);
    try {
      await accounts.resetPassword(token, password);
    } catch (e) {
      if (e instanceof ApiError && e.code === 'invalid_password_token') return invalidLink(reply);
      throw e;
    }
    const body = html`<section class="card narrow">
  <h1>Your password is set</h1>
  <p class="notice" role="status">You can now sign in with your email address and the new password.</p>
  <p><a class="button primary" href="/account/sign-in">Sign in</a></p>
</section>`;
    return sendPage(reply, 200, 'Password set', body);
  });
}
