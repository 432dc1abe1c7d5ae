import type { FastifyInstance, FastifyReply } from 'fastify';
import { ApiError } from '../http/errors.js';
import type { AccountsService, AuthUser } from '../modules/accounts/accounts.service.js';
import { accountNav } from './account-nav.js';
import { formOf, formUser, messageOf, signInUrl, viewerOf } from './forms.js';
import { html } from './html.js';
import { seeOther, sendPage } from './layout.js';

export interface ProfilePagesOptions {
  accounts: AccountsService;
}

/** Outcomes, shown after the redirect by a fixed code (no text ever comes from the URL). */
const NOTICES: Record<string, string> = {
  name: 'Your name was saved.',
  password: 'Your password was changed. You were signed out everywhere else.',
  password_set: 'Your password is set. From now on, sign in with your email address and this password.',
};
/** Refusals in words; the code goes in `data-code`. */
const ERRORS: Record<string, string> = {
  incorrect_current_password: 'The current password is not right. Your password was not changed.',
  current_password_required: 'Enter your current password to change it. Your password was not changed.',
  invalid_password: 'The new password must be 8 to 1024 characters. Your password was not changed.',
  too_many_login_attempts: 'Too many wrong passwords. Please wait a few minutes and try again.',
  invalid_name: 'A name can be at most 100 characters. Your name was not saved.',
};

type Refusal = { code: string; text: string; form: 'name' | 'password' };

/**
 * Profile (/account/profile, docs/storefront.md 'Profile'): the customer's name, their email (read
 * only), and a new password given the current one, after which every other session ends. An
 * account checkout made without a password sets its first one here, without a current one.
 */
export async function profilePages(app: FastifyInstance, opts: ProfilePagesOptions) {
  const { accounts } = opts;

  async function render(
    reply: FastifyReply,
    viewer: { user: AuthUser; email: string; nonce: string },
    status: number,
    notice: string | undefined,
    error: Refusal | undefined,
  ) {
    const user = (await accounts.getUser(viewer.user.id)) ?? viewer.user;
    const hasPassword = await accounts.hasPassword(viewer.user.id);
    const alert = (form: Refusal['form']) =>
      error?.form === form
        ? html`<p class="error" role="alert" id="${form}-error" data-code="${error.code}">${error.text}</p>`
        : '';
    const described = (form: Refusal['form']) =>
      error?.form === form ? html` aria-describedby="${form}-error" aria-invalid="true"` : '';
    return sendPage(
      reply,
      status,
      'Profile',
      html`${accountNav('profile')}
<h1>Profile</h1>
${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}
<section class="card" aria-labelledby="name-heading">
  <h2 id="name-heading">Your details</h2>
  ${alert('name')}
  <form method="post" action="/account/profile" class="profile">
    <input type="hidden" name="_nonce" value="${viewer.nonce}">
    <label for="first_name">First name</label>
    <input type="text" id="first_name" name="first_name" maxlength="100" autocomplete="given-name" value="${user.first_name}"${described('name')}>
    <label for="last_name">Last name</label>
    <input type="text" id="last_name" name="last_name" maxlength="100" autocomplete="family-name" value="${user.last_name}"${described('name')}>
    <label for="email">Email</label>
    <input type="email" id="email" value="${user.email}" readonly aria-describedby="email-note">
    <p class="muted" id="email-note">To change the email of your account, contact the store.</p>
    <div class="actions"><button type="submit" class="primary">Save details</button></div>
  </form>
</section>
<section class="card" aria-labelledby="password-heading">
  <h2 id="password-heading">${hasPassword ? 'Change password' : 'Set a password'}</h2>
  ${
    hasPassword
      ? ''
      : html`<p id="set-password-note">Your account was made with your order and has no password yet. Set one now, so you can sign in again after this session ends.</p>`
  }
  ${alert('password')}
  <form method="post" action="/account/profile/password" class="profile" data-form="${hasPassword ? 'change-password' : 'set-password'}">
    <input type="hidden" name="_nonce" value="${viewer.nonce}">
    <input type="text" name="username" value="${user.email}" autocomplete="username" hidden>
    ${
      hasPassword
        ? html`<label for="current_password">Current password</label>
    <input type="password" id="current_password" name="current_password" required autocomplete="current-password"${
      error?.code === 'incorrect_current_password' || error?.code === 'current_password_required'
        ? described('password')
        : ''
    }>`
        : ''
    }
    <label for="new_password">New password</label>
    <input type="password" id="new_password" name="new_password" required minlength="8" maxlength="1024" autocomplete="new-password" aria-describedby="new-password-note"${
      error?.code === 'invalid_password' ? html` aria-invalid="true"` : ''
    }>
    <p class="muted" id="new-password-note">At least 8 characters. ${hasPassword ? 'Changing it' : 'Setting it'} signs you out on every other device.</p>
    <div class="actions"><button type="submit" class="primary">${hasPassword ? 'Change password' : 'Set password'}</button></div>
  </form>
</section>`,
      viewer,
    );
  }

  app.get('/account/profile', async (request, reply) => {
    const viewer = viewerOf(request);
    if (!viewer) return seeOther(reply, signInUrl('/account/profile'));
    const notice = messageOf(request, 'notice', NOTICES);
    return render(reply, viewer, 200, notice, undefined);
  });

  /** A refusal re-renders the page with the API's status and code; anything else is thrown on. */
  async function attempt(
    reply: FastifyReply,
    viewer: { user: AuthUser; email: string; nonce: string },
    form: Refusal['form'],
    run: () => Promise<unknown>,
    done: string,
  ) {
    try {
      await run();
    } catch (e) {
      if (!(e instanceof ApiError) || !ERRORS[e.code]) throw e;
      return render(reply, viewer, e.status, undefined, { code: e.code, text: ERRORS[e.code]!, form });
    }
    return seeOther(reply, `/account/profile?notice=${done}`);
  }

  app.post('/account/profile', async (request, reply) => {
    const user = await formUser(request, accounts);
    if (!user) return seeOther(reply, signInUrl('/account/profile'));
    const viewer = { user, email: user.email, nonce: request.sessionNonce! };
    const form = formOf(request);
    return attempt(
      reply,
      viewer,
      'name',
      () => accounts.updateName(user.id, form.first_name ?? '', form.last_name ?? ''),
      'name',
    );
  });

  app.post('/account/profile/password', async (request, reply) => {
    const user = await formUser(request, accounts);
    if (!user) return seeOther(reply, signInUrl('/account/profile'));
    const viewer = { user, email: user.email, nonce: request.sessionNonce! };
    const form = formOf(request);
    // An account without a password sets its first one: the notice says so.
    const first = !(await accounts.hasPassword(user.id));
    return attempt(
      reply,
      viewer,
      'password',
      () =>
        accounts.changePassword(
          user.id,
          form.current_password || null,
          form.new_password ?? '',
          request.sessionId!,
        ),
      first ? 'password_set' : 'password',
    );
  });
}
