import { Type } from 'typebox';
import { requireAdmin, requireUser, SESSION_COOKIE } from '../../http/auth.js';
import { ApiError } from '../../http/errors.js';
import { errors, IdParams } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { actorOf } from '../audit/audit.model.js';
import * as S from './accounts.schemas.js';
import { type AccountsService, publicUser, SESSION_DAYS } from './accounts.service.js';

export async function accountsRoutes(app: App, opts: { accounts: AccountsService; secureCookies: boolean }) {
  const { accounts } = opts;
  const cookieOptions = {
    path: '/',
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: opts.secureCookies,
    maxAge: SESSION_DAYS * 86400,
  };

  // A request for an emailed link answers 202 whether or not the address has an account, so the
  // answer tells nobody who has one.
  const emailsALink = (path: string, summary: string, send: (email: string, ip: string) => Promise<void>) =>
    app.post(
      path,
      {
        schema: {
          tags: ['accounts'],
          summary,
          body: S.EmailLinkBody,
          response: { 202: Type.Object({ accepted: Type.Boolean() }), ...errors(400, 429) },
        },
      },
      async (request, reply) => {
        await send(request.body.email, request.ip);
        return reply.code(202).send({ accepted: true });
      },
    );

  app.post(
    '/auth/login',
    {
      schema: {
        tags: ['accounts'],
        summary: 'Sign in with email and password; sets the session cookie',
        body: S.LoginBody,
        response: { 200: S.SessionResponse, ...errors(400, 401, 429) },
      },
    },
    async (request, reply) => {
      const { user, sessionId, nonce } = await accounts.login(
        request.body.email,
        request.body.password,
        request.ip,
      );
      reply.setCookie(SESSION_COOKIE, sessionId, cookieOptions);
      return { user: publicUser(user), nonce };
    },
  );

  app.post(
    '/auth/logout',
    {
      // A state-changing cookie request: without its nonce it is anonymous (docs/api.md), so a
      // cross-site form cannot sign a customer out.
      preValidation: requireUser,
      schema: {
        tags: ['accounts'],
        summary: 'End the session (the session cookie with its X-REST-Nonce)',
        response: { 200: Type.Object({ success: Type.Boolean() }), ...errors(401, 403) },
      },
    },
    async (request, reply) => {
      if (request.sessionId) await accounts.logout(request.sessionId);
      reply.clearCookie(SESSION_COOKIE, { path: '/' });
      return { success: true };
    },
  );

  emailsALink(
    '/auth/password/forgot',
    'Email a password reset link (docs/email.md, "Passwords"); 202 whether or not the address has an account',
    (email, ip) => accounts.requestPasswordReset(email, ip),
  );

  app.post(
    '/auth/password/reset',
    {
      config: { validationCodes: { invalid: { password: 'invalid_password' } } },
      schema: {
        tags: ['accounts'],
        summary:
          'Set a new password with the token of an emailed link; the link is used up and every session ends',
        body: S.ResetPasswordBody,
        response: { 200: Type.Object({ success: Type.Boolean() }), ...errors(400) },
      },
    },
    async (request) => {
      await accounts.resetPassword(request.body.token, request.body.password);
      return { success: true };
    },
  );

  emailsALink(
    '/auth/sign-in-link',
    'Email a one-time sign-in link to a customer (docs/storefront.md, "Sign-in link"); 202 whether or not the address has an account',
    (email, ip) => accounts.requestSignInLink(email, ip),
  );

  app.post(
    '/auth/sign-in-link/claim',
    {
      schema: {
        tags: ['accounts'],
        summary: 'Sign in with the token of an emailed sign-in link (used once); sets the session cookie',
        body: S.SignInLinkClaimBody,
        response: { 200: S.SessionResponse, ...errors(400) },
      },
    },
    async (request, reply) => {
      const { user, sessionId, nonce } = await accounts.claimSignInLink(request.body.token);
      reply.setCookie(SESSION_COOKIE, sessionId, cookieOptions);
      return { user: publicUser(user), nonce };
    },
  );

  app.post(
    '/users/me/password',
    {
      preValidation: requireUser,
      config: { validationCodes: { invalid: { password: 'invalid_password' } } },
      schema: {
        tags: ['accounts'],
        summary:
          "Set the signed-in user's password: the first one of an account made at checkout without a current one, else given the current one; every other session ends",
        body: S.SetPasswordBody,
        response: { 200: Type.Object({ success: Type.Boolean() }), ...errors(400, 401, 403, 429) },
      },
    },
    async (request) => {
      await accounts.changePassword(
        request.user!.id,
        request.body.current_password ?? null,
        request.body.password,
        request.sessionId ?? '',
      );
      return { success: true };
    },
  );

  app.get(
    '/auth/me',
    {
      schema: {
        tags: ['accounts'],
        summary: 'The signed-in user and a fresh nonce',
        response: { 200: S.SessionResponse, ...errors(401) },
      },
    },
    async (request) => {
      if (!request.user) throw new ApiError('rest_not_logged_in');
      return { user: publicUser(request.user), nonce: request.sessionNonce ?? '' };
    },
  );

  app.post(
    '/users',
    {
      preValidation: requireAdmin,
      schema: {
        tags: ['accounts'],
        summary: 'Create a user (administrator)',
        body: S.CreateUserBody,
        response: { 201: S.User, ...errors(400, 401, 403, 409) },
      },
    },
    async (request, reply) => {
      const user = await accounts.createUser(request.body, actorOf(request));
      return reply.status(201).send(publicUser(user));
    },
  );

  app.get(
    '/users',
    {
      preValidation: requireAdmin,
      schema: {
        tags: ['accounts'],
        summary: 'List users, newest first (administrator); X-WP-Total and X-WP-TotalPages carry the totals',
        querystring: S.UserListQuery,
        response: { 200: Type.Array(S.User), ...errors(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const page = await accounts.listUsers(request.query);
      reply.header('X-WP-Total', String(page.total));
      reply.header('X-WP-TotalPages', String(Math.ceil(page.total / request.query.per_page)));
      return page.items.map(publicUser);
    },
  );

  app.get(
    '/users/:id',
    {
      preValidation: requireAdmin,
      schema: {
        tags: ['accounts'],
        summary: 'One user (administrator)',
        params: IdParams,
        response: { 200: S.User, ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => publicUser(await accounts.requireUser(request.params.id)),
  );

  app.post(
    '/users/me/application-passwords',
    {
      preValidation: requireUser,
      schema: {
        tags: ['accounts'],
        summary: 'Create an application password for Basic auth; the password is shown only here',
        body: S.AppPasswordBody,
        response: { 201: S.AppPasswordCreated, ...errors(400, 401, 403) },
      },
    },
    async (request, reply) =>
      reply.status(201).send(await accounts.createAppPassword(request.user!.id, request.body.name)),
  );

  app.get(
    '/users/me/application-passwords',
    {
      preValidation: requireUser,
      schema: {
        tags: ['accounts'],
        summary: 'List application passwords (never the secrets)',
        response: { 200: S.AppPasswordList, ...errors(401) },
      },
    },
    async (request) => accounts.listAppPasswords(request.user!.id),
  );

  app.delete(
    '/users/me/application-passwords/:uuid',
    {
      preValidation: requireUser,
      schema: {
        tags: ['accounts'],
        summary: 'Revoke an application password',
        params: Type.Object({ uuid: Type.String({ format: 'uuid' }) }),
        response: { 200: Type.Object({ success: Type.Boolean() }), ...errors(401, 404) },
      },
    },
    async (request) => {
      await accounts.deleteAppPassword(request.user!.id, request.params.uuid);
      return { success: true };
    },
  );
}
