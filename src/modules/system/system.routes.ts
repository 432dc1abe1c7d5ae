import { Type } from 'typebox';
import type { TestClock } from '../../clock.js';
import { rfc3339 } from '../../clock.js';
import { requireAdmin } from '../../http/auth.js';
import { ApiError } from '../../http/errors.js';
import { errors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';

export async function systemRoutes(
  app: App,
  opts: { testClock: TestClock | null; unopenableSecrets: () => Promise<string[]> },
) {
  app.get(
    '/health',
    {
      schema: {
        tags: ['system'],
        summary: "Readiness: migrations are done and the vault keys open the store's sealed secrets",
        response: {
          200: Type.Object({ ok: Type.Literal(true) }),
          503: Type.Object({
            ok: Type.Literal(false),
            reason: Type.Literal('vault_key_mismatch'),
            secrets_with_unknown_key: Type.Integer(),
          }),
        },
      },
    },
    async (_request, reply) => {
      // A secret sealed by a process with another VAULT_KEY after this one started: this process
      // would fail its signatures and Stripe calls, so a load balancer takes it out of rotation.
      const unopenable = await opts.unopenableSecrets();
      if (unopenable.length === 0) return { ok: true as const };
      return reply.code(503).send({
        ok: false as const,
        reason: 'vault_key_mismatch' as const,
        secrets_with_unknown_key: unopenable.length,
      });
    },
  );

  const Now = Type.Object({ now: Type.String({ format: 'date-time' }) });
  const { testClock } = opts;
  // Without TEST_CLOCK=1 the routes do not exist at all (404 rest_no_route), as
  // docs/administration.md, 'The test clock' says.
  if (!testClock) return;

  app.get(
    '/test-clock',
    {
      preValidation: requireAdmin,
      schema: {
        tags: ['system'],
        summary: 'Test clock (TEST_CLOCK=1 only)',
        response: { 200: Now, ...errors(401, 403) },
      },
    },
    async () => ({ now: rfc3339(testClock.now()) }),
  );

  app.post(
    '/test-clock',
    {
      preValidation: requireAdmin,
      schema: {
        tags: ['system'],
        summary: 'Move the test clock forward',
        body: Type.Object(
          { advance_seconds: Type.Integer({ minimum: 0, maximum: 10 * 365 * 86400 }) },
          { additionalProperties: false },
        ),
        response: { 200: Now, ...errors(400, 401, 403) },
      },
    },
    async (request) => {
      if (!testClock) throw new ApiError('rest_no_route');
      return { now: rfc3339(await testClock.advance(request.body.advance_seconds)) };
    },
  );
}
