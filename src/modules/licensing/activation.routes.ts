import type { FastifyRequest } from 'fastify';
import { errors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { InstalledBase } from '../reports/reports.module.js';
import * as S from './activation.schemas.js';
import type { ActivationService, CallerMeta } from './activation.service.js';
import type { ReceiptService } from './receipt.service.js';

// biome-ignore lint/suspicious/noControlCharactersInRegex: stripping control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/g;

function callerOf(request: FastifyRequest): CallerMeta {
  const ua = request.headers['user-agent'];
  return {
    ip: request.ip,
    user_agent: (typeof ua === 'string' ? ua : '').replace(CONTROL, '').slice(0, 512),
  };
}

/**
 * The public licensing API (docs/licensing.md): no user credentials; the license key plus the
 * website identity (or an activation id) authorise the call. Bodies are never logged (keys are
 * secrets).
 */
export async function activationRoutes(
  app: App,
  opts: { activations: ActivationService; receipts: ReceiptService; installedBase: InstalledBase },
) {
  const { activations, receipts, installedBase } = opts;

  app.post(
    '/licenses/activate',
    {
      config: { validationCodes: S.identityCodes },
      schema: {
        tags: ['licensing'],
        summary: 'Bind a website identity to a license (idempotent for an active identity)',
        body: S.ActivateBody,
        response: { 200: S.ActivateResponse, ...errors(400, 403, 404, 500, 501, 503) },
      },
    },
    async (request) => activations.activate(request.body, callerOf(request)),
  );

  app.post(
    '/licenses/validate',
    {
      config: { validationCodes: S.validateCodes },
      schema: {
        tags: ['licensing'],
        summary: 'Is this license valid for this website identity? Decide by valid and effective_status',
        body: S.ValidateBody,
        response: { 200: S.ValidateSuccess, 403: S.ValidateFailure, ...errors(400, 503) },
      },
    },
    async (request, reply) => {
      // Without `receipt` validate runs exactly as it always did: no extra read, nothing signed.
      const input = request.body;
      const result = await (input.receipt === true ? receipts.validate(input) : activations.validate(input));
      // A valid site that says what it runs is noted in memory for the installed-base report: no statement.
      if (result.status === 200) installedBase.record(result.body.product_id, result.site, input);
      return reply.status(result.status).send(result.body);
    },
  );

  app.post(
    '/licenses/deactivate',
    {
      config: { validationCodes: S.identityCodes },
      schema: {
        tags: ['licensing'],
        summary: 'Free a slot: by activation_id, or by domain and installation_id (idempotent)',
        body: S.DeactivateBody,
        response: { 200: S.Success, ...errors(400, 403, 404, 500, 503) },
      },
    },
    async (request) => {
      await activations.deactivate(request.body);
      return { success: true as const };
    },
  );
}
