import { requireAdmin } from '../../http/auth.js';
import { errors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { actorOf } from '../audit/audit.model.js';
import { NoQuery, RotateBody, SigningKeyList } from './signing.schemas.js';
import type { SigningService } from './signing.service.js';

/**
 * How long a client or a proxy may keep the public list: a rotation reaches them within this. A
 * client that meets a key id it does not know fetches the list again (docs/licensing.md,
 * 'Offline receipts').
 */
const PUBLIC_CACHE = 'public, max-age=300';

/** Signing keys (docs/administration.md, 'Signing keys'): never any private material in an answer. */
export async function signingRoutes(app: App, opts: { signing: SigningService }) {
  const { signing } = opts;
  const invalid = { validationCodes: { unknown: 'invalid_parameters' as const } };

  app.get(
    '/software/signing-keys',
    {
      config: invalid,
      schema: {
        tags: ['signing'],
        summary: 'The public keys that verify receipts and signatures: the active one and the retired ones',
        querystring: NoQuery,
        response: { 200: SigningKeyList, ...errors(400) },
      },
    },
    async (_request, reply) => {
      const keys = await signing.list();
      reply.header('cache-control', PUBLIC_CACHE);
      return { keys };
    },
  );

  app.get(
    '/signing-keys',
    {
      preValidation: requireAdmin,
      config: invalid,
      schema: {
        tags: ['signing'],
        summary: 'The signing keys, newest first (public halves only)',
        querystring: NoQuery,
        response: { 200: SigningKeyList, ...errors(400, 401, 403) },
      },
    },
    async () => ({ keys: await signing.list() }),
  );

  app.post(
    '/signing-keys/rotate',
    {
      preValidation: requireAdmin,
      config: invalid,
      schema: {
        tags: ['signing'],
        summary: 'Make a new active key; the previous one is retired and stays listed',
        body: RotateBody,
        response: { 200: SigningKeyList, ...errors(400, 401, 403) },
      },
    },
    async (request) => ({ keys: await signing.rotate(actorOf(request)) }),
  );
}
