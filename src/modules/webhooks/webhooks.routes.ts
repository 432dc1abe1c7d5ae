import { requireAdmin } from '../../http/auth.js';
import { errors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { actorOf } from '../audit/audit.model.js';
import { AttemptList, EventParams, EventState } from './webhooks.schemas.js';
import type { WebhooksService } from './webhooks.service.js';

export async function webhooksRoutes(app: App, opts: { webhooks: WebhooksService }) {
  const { webhooks } = opts;

  app.get(
    '/webhooks/attempts',
    {
      preValidation: requireAdmin,
      schema: {
        tags: ['webhooks'],
        summary: 'The 100 most recent delivery attempts, newest first',
        response: { 200: AttemptList, ...errors(401, 403) },
      },
    },
    () => webhooks.attempts(),
  );

  app.post(
    '/webhooks/events/:event_id/redeliver',
    {
      preValidation: requireAdmin,
      schema: {
        tags: ['webhooks'],
        summary: 'Deliver an event again now, with a fresh series of up to 5 attempts',
        params: EventParams,
        response: { 202: EventState, ...errors(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const state = await webhooks.redeliver(request.params.event_id, actorOf(request));
      return reply.status(202).send(state);
    },
  );
}
