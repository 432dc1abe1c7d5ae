import { requireUser } from '../../http/auth.js';
import { errors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import * as S from './oauth.schemas.js';
import type { OAuthService } from './oauth.service.js';

/**
 * The customer's side of approval activation, for a single-page approval client (docs/oauth.md,
 * 'Single-page approval clients (REST)'). The signed-in owner reviews the request, then confirms
 * it; a cookie-authenticated confirm needs the X-REST-Nonce header like every other state-changing
 * request (docs/api.md, 'The nonce rule').
 */
export async function oauthRoutes(app: App, opts: { oauth: OAuthService }) {
  const { oauth } = opts;

  app.get(
    '/licenses/oauth/validate',
    {
      preValidation: requireUser,
      config: { validationCodes: S.validateCodes },
      schema: {
        tags: ['licensing'],
        summary: 'Review an approval request: checks the signed state, the key and ownership',
        querystring: S.ValidateQuery,
        response: { 200: S.ValidateResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => oauth.validate(request.user!.id, request.query),
  );

  app.post(
    '/licenses/oauth/confirm',
    {
      preValidation: requireUser,
      config: { validationCodes: S.confirmCodes },
      schema: {
        tags: ['licensing'],
        summary: 'Approve the request: issues a single-use activation token and the callback URL',
        body: S.ConfirmBody,
        response: { 200: S.ConfirmResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => oauth.confirm(request.user!.id, request.body),
  );
}
