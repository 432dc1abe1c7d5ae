import { Type } from 'typebox';
import { requireAdmin } from '../../http/auth.js';
import { errors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { actorOf } from '../audit/audit.model.js';
import type { TestDataService } from './test-data.service.js';

const Deleted = Type.Object({
  orders: Type.Integer(),
  licenses: Type.Integer(),
  activations: Type.Integer(),
  download_tokens: Type.Integer(),
  subscriptions: Type.Integer(),
});

export async function testDataRoutes(app: App, opts: { testData: TestDataService }) {
  app.delete(
    '/test-data',
    {
      preValidation: requireAdmin,
      schema: {
        tags: ['orders'],
        summary:
          "Delete the test orders and what they made: licenses, activations, download tokens, subscriptions (docs/payments.md, 'Deleting test data'); in either mode",
        querystring: Type.Object({}, { additionalProperties: false }),
        response: { 200: Deleted, ...errors(400, 401, 403) },
      },
    },
    (request) => opts.testData.delete(actorOf(request)),
  );
}
