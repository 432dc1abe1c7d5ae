import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SESSION_COOKIE } from '../http/auth.js';
import { ApiError } from '../http/errors.js';
import type { SignedOutPagesOptions } from './forms.js';
import { formOf, formUser, safeNext, setSessionCookie, signedOutForm, viewerOf } from './forms.js';
import { html } from './html.js';
import { seeOther, sendPage } from './layout.js';

export async function signInPages(app: FastifyInstance, opts: SignedOutPagesOptions) {
  const { accounts, secureCookies } = opts;
  const csrf = signedOutForm(secureCookies);

  async function render(
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    next: string,
    fields: { email?: string; error?: string } = {},
  ) {
    // A sign-in link is offered only while the store can email one.
    const links = await opts.mailAvailable();
    const approving = next.startsWith('/account/approve');
    const body = html`<section class="card narrow">
  <h1>Sign in</h1>
  <p class="muted">${
    approving
      ? 'A site is asking to activate one of your licenses. Sign in to your customer account to review the request.'
      : 'Sign in to your customer account to see your licenses and the sites they are activated on.'
  }</p>
  ${fields.error ? html`<p class="error" role="alert">${fields.error}</p>` : ''}
  <form method="post" action="/account/sign-in">
    <input type="hidden" name="_csrf" value="${csrf.token(request, reply)}">
    <input type="hidden" name="next" value="${next}">
    <label for="email">Email address</label>
    <input id="email" name="email" type="email" autocomplete="username" required value="${fields.email ?? ''}">
    <label for="password">Password</label>
    <input id="password" name="password" type="password" autocomplete="current-password" required>
    <button type="submit" class="primary full">Sign in</button>
  </form>
  ${
    links
      ? html`<p><a class="button secondary full" href="/account/sign-in-link">Email me a sign-in link</a></p>`
      : ''
  }
  <p class="muted"><a href="/account/forgot-password">Forgot your password?</a></p>
</section>`;
    return sendPage(reply, status, 'Sign in', body);
  }

  app.get('/account/sign-in', async (request, reply) => {
    const next = safeNext((request.query as Record<string, unknown>).next);
    if (viewerOf(request)) return seeOther(reply, next);
    return render(request, reply, 200, next);
  });

  app.post('/account/sign-in', async (request, reply) => {
    const form = formOf(request);
    const next = safeNext(form.next);
    const email = (form.email ?? '').slice(0, 254);
    if (!csrf.ok(request)) {
      return render(request, reply, 403, next, {
        email,
        error: 'This sign-in form has expired. Please enter your details again.',
      });
    }
    if (!email || !form.password) {
      return render(request, reply, 400, next, { email, error: 'Enter your email address and password.' });
    }
    try {
      const { sessionId } = await accounts.login(email, form.password, request.ip);
      setSessionCookie(reply, sessionId, secureCookies);
      return seeOther(reply, next);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      const error =
        e.code === 'too_many_login_attempts'
          ? 'Too many failed sign-in attempts. Please wait a few minutes and try again.'
          : 'The email address or password is incorrect.';
      return render(request, reply, e.status, next, { email, error });
    }
  });

  app.post('/account/sign-out', async (request, reply) => {
    const user = await formUser(request, accounts);
    if (user && request.sessionId) await accounts.logout(request.sessionId);
    reply.clearCookie(SESSION_COOKIE, { path: '/' });
    const next = formOf(request).next;
    return seeOther(
      reply,
      next ? `/account/sign-in?${new URLSearchParams({ next: safeNext(next) })}` : '/account/sign-in',
    );
  });
}
