import { Type } from 'typebox';
import { PlainText } from '../../http/schemas.js';
import type { ValidationCodes } from '../../http/validation.js';
import { MAX_DOMAIN_INPUT } from '../identity/domain.js';
import { SiteFactInputs, siteFactCodes, ValidateVersion } from '../reports/installed-base.schemas.js';
import { Entitlements, standingFields } from './license.schemas.js';

/**
 * Public licensing bodies. Types and lengths are checked here; what an identity must look like
 * is the identity module's rule (so a bad domain and a bad UUID get `invalid_identity` alike).
 */
const LicenseKey = Type.String({ maxLength: 128, description: 'The license key' });
const Domain = Type.String({
  maxLength: MAX_DOMAIN_INPUT,
  description: 'Site URL or host; normalised (docs/licensing.md, Domain normalisation)',
});
const InstallationId = Type.String({ maxLength: 64, description: 'UUIDv4, lowercase' });
const ActivationId = Type.Integer({ minimum: 1, maximum: 2147483647 });

export const ActivateBody = Type.Object(
  {
    license_key: LicenseKey,
    domain: Domain,
    installation_id: InstallationId,
    machine_id: Type.Optional(
      Type.Union([PlainText({ maxLength: 255 }), Type.Null()], { description: 'Metadata only' }),
    ),
    return_url: Type.Optional(
      Type.String({ maxLength: 2048, description: 'Callback for customer approval' }),
    ),
    activation_token: Type.Optional(
      Type.String({ maxLength: 512, description: 'From the approval callback' }),
    ),
  },
  { additionalProperties: false },
);

export const ValidateBody = Type.Object(
  {
    license_key: LicenseKey,
    domain: Domain,
    installation_id: InstallationId,
    receipt: Type.Optional(
      Type.Boolean({
        description:
          "true: a valid answer carries a signed offline receipt (docs/licensing.md, 'Offline receipts')",
      }),
    ),
    // What the site runs, for the installed-base report (docs/distribution.md, 'What runs in the field').
    version: ValidateVersion,
    ...SiteFactInputs,
  },
  { additionalProperties: false },
);

export const DeactivateBody = Type.Object(
  {
    license_key: LicenseKey,
    activation_id: Type.Optional(ActivationId),
    domain: Type.Optional(Domain),
    installation_id: Type.Optional(InstallationId),
  },
  { additionalProperties: false },
);

export const CustomerDeactivateBody = Type.Object(
  {
    activation_id: Type.Optional(ActivationId),
    domain: Type.Optional(Domain),
    installation_id: Type.Optional(InstallationId),
  },
  { additionalProperties: false },
);

/** Schema violations named with the licensing codes (docs/licensing.md, '6. Error codes'). */
export const identityCodes: ValidationCodes = {
  missing: { license_key: 'missing_key', domain: 'missing_identity', installation_id: 'missing_identity' },
  invalid: {
    domain: 'invalid_identity',
    installation_id: 'invalid_identity',
    return_url: 'invalid_return_url',
  },
};

/** Validate's codes: the identity's, and those of what the site says it runs. */
export const validateCodes: ValidationCodes = {
  ...identityCodes,
  invalid: { ...identityCodes.invalid, ...siteFactCodes },
};

export const ActivateResponse = Type.Object({
  success: Type.Boolean(),
  activation_id: Type.Optional(Type.Integer()),
  activations_remaining: Type.Optional(Type.Integer({ description: '-1 when unlimited' })),
  product_id: Type.Optional(Type.Integer()),
  variation_id: Type.Optional(Type.Integer()),
  message: Type.Optional(Type.String({ description: '"Already activated" on a repeat' })),
  environment: Type.Optional(
    Type.Literal('staging', { description: 'Only on a staging site, which takes no seat of the limit' }),
  ),
  staging_activations_remaining: Type.Optional(Type.Integer({ description: 'Only on a staging site' })),
  code: Type.Optional(Type.Literal('oauth_required')),
  redirect_url: Type.Optional(Type.String({ description: 'Opaque; open it unmodified' })),
});

const NullableString = Type.Union([Type.String(), Type.Null()]);

/** Only when asked for with `receipt: true`, and only on a valid answer (docs/licensing.md, 'Offline receipts'). */
export const Receipt = Type.Object({
  payload: Type.String({ description: 'base64url (no padding) of the UTF-8 JSON of the receipt' }),
  signature: Type.String({ description: "base64 Ed25519 signature of the payload string's ASCII bytes" }),
  signing_key_id: Type.String({ description: 'The key in GET /v1/software/signing-keys that verifies it' }),
});

export const ValidateSuccess = Type.Object({
  valid: Type.Literal(true),
  error: Type.Null(),
  message: Type.Null(),
  effective_status: Type.Literal('valid'),
  license_key: Type.String(),
  product_id: Type.Integer(),
  variation_id: Type.Integer(),
  ...standingFields,
  subscription_status: NullableString,
  subscription_active: Type.Boolean(),
  domain_active: Type.Literal(true),
  entitlements: Entitlements,
  receipt: Type.Optional(Receipt),
});

export const ValidateFailure = Type.Object({
  valid: Type.Literal(false),
  error: Type.String(),
  effective_status: Type.String(),
  message: Type.String(),
  entitlements: Type.Union([Entitlements, Type.Null()]),
  domain_active: Type.Optional(Type.Literal(false)),
  product_id: Type.Optional(Type.Integer()),
  variation_id: Type.Optional(Type.Integer()),
});

export const Success = Type.Object({ success: Type.Literal(true) });
