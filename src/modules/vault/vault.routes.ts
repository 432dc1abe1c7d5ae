import { Type } from 'typebox';
import { requireAdmin } from '../../http/auth.js';
import { EmptyBody, errors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { actorOf } from '../audit/audit.model.js';
import type { KeyVault } from './vault.service.js';

/** What each re-sealed value became (docs/releases.md, 'Rotating the key'). */
const Reseal = {
  from_key_id: Type.Union([Type.String(), Type.Null()]),
  ok: Type.Boolean(),
  error: Type.Optional(Type.String()),
};
const RotateKeyResponse = Type.Object(
  {
    key_id: Type.String(),
    resealed: Type.Integer(),
    results: Type.Array(Type.Object({ artifact_id: Type.Integer(), ...Reseal })),
    secrets_resealed: Type.Integer(),
    secrets: Type.Array(Type.Object({ secret: Type.String(), ...Reseal })),
  },
  // Any further field passes through as it is.
  { additionalProperties: true },
);

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
