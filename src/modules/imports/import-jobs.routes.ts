import { Type } from 'typebox';
import { requireAdmin } from '../../http/auth.js';
import { errors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { actorOf } from '../audit/audit.model.js';
import { ImportJob, ImportJobParams, ImportJobSummary, StartImportBody } from './import-jobs.schemas.js';
import type { ImportJobService } from './import-jobs.service.js';

/** Imports started from the console, for administrators (docs/migrating.md, 'From the console'). */
export async function importJobsRoutes(app: App, opts: { jobs: ImportJobService }) {
  app.post(
    '/imports',
    {
      preValidation: requireAdmin,
      config: { validationCodes: { unknown: 'invalid_parameters' } },
      schema: {
        tags: ['imports'],
        summary:
          'Start an import job (or a dry run) in the background; 409 import_running while another is queued or running',
        body: StartImportBody,
        response: { 202: ImportJob, ...errors(400, 401, 403, 409, 413) },
      },
    },
    async (request, reply) => reply.code(202).send(await opts.jobs.start(request.body, actorOf(request))),
  );

  app.get(
    '/imports',
    {
      preValidation: requireAdmin,
      schema: {
        tags: ['imports'],
        summary: 'The 20 most recent import jobs, newest first, without their reports',
        response: { 200: Type.Array(ImportJobSummary), ...errors(401, 403) },
      },
    },
    () => opts.jobs.list(),
  );

  app.get(
    '/imports/:id',
    {
      preValidation: requireAdmin,
      config: { validationCodes: { unknown: 'invalid_parameters' } },
      schema: {
        tags: ['imports'],
        summary: 'An import job: its status, counts so far, total, and its report once done',
        params: ImportJobParams,
        response: { 200: ImportJob, ...errors(400, 401, 403, 404) },
      },
    },
    (request) => opts.jobs.get(request.params.id),
  );
}
