import { Type } from 'typebox';
import { requireAdmin } from '../../http/auth.js';
import { EmptyBody, errors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { actorOf } from '../audit/audit.model.js';
import type { KeyVault } from './vault.service.js';

/** What each re-sealed value became (docs/releases.md, 'Rotating the key'). */
const RotateKeyResponse = Type.Object({}, { additionalProperties: true });

/** Key rotation (docs/releases.md, 'Rotating the key'); administrator-only, listed with the storage routes. */
export async function vaultRoutes(app: App, opts: { vault: KeyVault }) {
  app.post(
    '/software/storage/rotate-key',
    {
      preValidation: requireAdmin,
      schema: {
        tags: ['releases'],
        summary: 'Re-seal every encrypted artifact and sealed secret with the current VAULT_KEY',
        body: EmptyBody,
        response: { 200: RotateKeyResponse, ...errors(400, 401, 403) },
      },
    },
    (request) => opts.vault.rotateKey(actorOf(request)),
  );
}
