import { requireAdmin, requireUser } from '../../http/auth.js';
import { errors, IdParams } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { ValidationCodes } from '../../http/validation.js';
import { actorOf } from '../audit/audit.model.js';
import * as A from './activation.schemas.js';
import type { ActivationService } from './activation.service.js';
import * as S from './license.schemas.js';
import type { LicenseService } from './license.service.js';

const adminCodes: ValidationCodes = {
  missing: { entitlement_policy: 'invalid_entitlement_policy' },
  invalid: { entitlement_policy: 'invalid_entitlement_policy' },
};

/**
 * License administration and the customer's license routes (docs/licensing.md, sections 4 and 7).
 */
export async function licenseRoutes(
  app: App,
  opts: { licenses: LicenseService; activations: ActivationService },
) {
  const { licenses, activations } = opts;

  app.get(
    '/licenses',
    {
      preValidation: requireAdmin,
      schema: {
        tags: ['licensing'],
        summary: 'List licenses (administrator)',
        querystring: S.ListQuery,
        response: { 200: S.LicenseList, ...errors(400, 401, 403) },
      },
    },
    async (request) => {
      const { page, per_page, ...filter } = request.query;
      return licenses.list(filter, page, per_page);
    },
  );

  app.post(
    '/licenses',
    {
      preValidation: requireAdmin,
      config: { validationCodes: adminCodes },
      schema: {
        tags: ['licensing'],
        summary: 'Issue a license (administrator); the key is generated unless given',
        body: S.CreateLicenseBody,
        response: { 201: S.License, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) =>
      reply.status(201).send(await licenses.create(request.body, undefined, actorOf(request))),
  );

  app.get(
    '/licenses/:id',
    {
      preValidation: requireAdmin,
      schema: {
        tags: ['licensing'],
        summary: 'One license with its activations (administrator)',
        params: IdParams,
        response: { 200: S.LicenseWithActivations, ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => licenses.get(request.params.id),
  );

  app.patch(
    '/licenses/:id',
    {
      preValidation: requireAdmin,
      config: { validationCodes: adminCodes },
      schema: {
        tags: ['licensing'],
        summary: 'Change usage expiry, activation limit or entitlement policy (administrator)',
        params: IdParams,
        body: S.PatchLicenseBody,
        response: { 200: S.License, ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => licenses.patch(request.params.id, request.body, actorOf(request)),
  );

  app.delete(
    '/licenses/:id',
    {
      preValidation: requireAdmin,
      schema: {
        tags: ['licensing'],
        summary: 'Revoke a license (administrator); emits license.revoked',
        params: IdParams,
        response: { 200: A.Success, ...errors(400, 401, 403, 404, 500) },
      },
    },
    async (request) => {
      await licenses.revoke(request.params.id, actorOf(request));
      return { success: true as const };
    },
  );

  app.get(
    '/licenses/:id/activations',
    {
      preValidation: requireAdmin,
      schema: {
        tags: ['licensing'],
        summary: 'All activations of a license, active and deactivated (administrator)',
        params: IdParams,
        response: { 200: { type: 'array', items: S.Activation }, ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => licenses.activations(request.params.id),
  );

  app.post(
    '/licenses/:id/activations/:activation_id/deactivate',
    {
      preValidation: requireAdmin,
      config: { validationCodes: { unknown: 'invalid_parameters' } },
      schema: {
        tags: ['licensing'],
        summary: 'Deactivate one activation of a license (administrator); no license key needed',
        params: S.ActivationParams,
        body: S.NoBody,
        response: { 200: A.Success, ...errors(400, 401, 403, 404, 500) },
      },
    },
    async (request) => {
      await activations.adminDeactivate(request.params.id, request.params.activation_id, actorOf(request));
      return { success: true as const };
    },
  );

  app.get(
    '/account/licenses',
    {
      preValidation: requireUser,
      schema: {
        tags: ['licensing'],
        summary: "The signed-in customer's licenses",
        response: { 200: { type: 'array', items: S.CustomerLicense }, ...errors(401) },
      },
    },
    async (request) => licenses.listForCustomer(request.user!.id),
  );

  app.post(
    '/account/licenses/:id/deactivate',
    {
      preValidation: requireUser,
      config: { validationCodes: A.identityCodes },
      schema: {
        tags: ['licensing'],
        summary: 'Deactivate one of my activations: by activation_id, or by domain and installation_id',
        params: IdParams,
        body: A.CustomerDeactivateBody,
        response: { 200: A.Success, ...errors(400, 401, 403, 404, 500) },
      },
    },
    async (request) => {
      await activations.customerDeactivate(request.user!.id, request.params.id, request.body);
      return { success: true as const };
    },
  );
}
