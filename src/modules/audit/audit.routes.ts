import { Type } from 'typebox';
import { requireAdmin } from '../../http/auth.js';
import { errors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { AuditEvent, AuditQuery } from './audit.schemas.js';
import type { AuditService } from './audit.service.js';

/** The audit trail, read by administrators (docs/api.md, 'Audit events'). */
export async function auditRoutes(app: App, opts: { audit: AuditService }) {
  app.get(
    '/audit-events',
    {
      preValidation: requireAdmin,
      config: { validationCodes: { unknown: 'invalid_parameters' } },
      schema: {
        tags: ['audit'],
        summary: 'Administrator changes, newest first; X-WP-Total and X-WP-TotalPages carry the totals',
        querystring: AuditQuery,
        response: { 200: Type.Array(AuditEvent), ...errors(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const { page, per_page, ...filter } = request.query;
      const { items, total } = await opts.audit.list(filter, page, per_page);
      reply.header('X-WP-Total', String(total));
      reply.header('X-WP-TotalPages', String(Math.ceil(total / per_page)));
      return items;
    },
  );
}
