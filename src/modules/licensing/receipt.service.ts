import type { Static } from 'typebox';
import { type Clock, rfc3339 } from '../../clock.js';
import { ApiError } from '../../http/errors.js';
import { type Identity, resolveIdentity } from '../identity/identity.js';
import type { SettingsService } from '../settings/settings.service.js';
import type { Signature } from '../signing/signing.module.js';
import type { Receipt, ValidateSuccess } from './activation.schemas.js';
import type { ActivationService, ValidateResult } from './activation.service.js';
import { evaluateLicense } from './entitlements.js';
import type { LicenseRepository } from './license.repository.js';
import { factsOf } from './license.view.js';
import type { LicenseForIdentity } from './licensing.model.js';

/**
 * What a receipt says, in this order (docs/licensing.md, 'Offline receipts'). No license key, no
 * email, nothing about the customer.
 */
export interface ReceiptPayload {
  v: 1;
  license_id: number;
  product_id: number;
  variation_id: number;
  installation_id: string;
  domain: string;
  activation_id: number;
  status: 'valid';
  usage_expires_at: string | null;
  updates_expires_at: string | null;
  support_expires_at: string | null;
  update_entitled: boolean;
  support_active: boolean | null;
  issued_at: string;
  valid_until: string;
}

const DAY_MS = 86_400_000;

type ValidateInput = { license_key: string; domain?: string; installation_id?: string };

/**
 * Validate with an offline receipt (`receipt: true`): the answer is validate's own, and a valid
 * one carries `receipt` signed with the store's active signing key. Only this path reads more than
 * validate does; validate without `receipt` never comes here (docs/performance.md).
 */
export class ReceiptService {
  constructor(
    private readonly activations: ActivationService,
    private readonly repo: LicenseRepository,
    private readonly clock: Clock,
    private readonly settings: SettingsService,
    private readonly signer: { sign(data: Buffer): Promise<Signature> },
  ) {}

  async validate(input: ValidateInput): Promise<ValidateResult> {
    // Validate's answer does not carry the license's and the activation's ids the receipt names,
    // so they are read once more; a license or site that changed in between (a revocation, a
    // deactivation) is answered as validate answers it now, never signed.
    for (let attempt = 1; attempt <= 3; attempt++) {
      const result = await this.activations.validate(input);
      if (result.status !== 200) return result;
      const identity = resolveIdentity(input.domain, input.installation_id);
      const license = await this.repo.findForIdentity(input.license_key, identity.identity_key);
      const now = this.clock.now();
      if (
        license &&
        license.identity_activation_id !== null &&
        evaluateLicense(factsOf(license), now, true).effective_status === 'valid'
      ) {
        result.body.receipt = await this.issue(result.body, license, identity, now);
        return result;
      }
    }
    // Three answers in a row contradicted by the read after them: the license is changing under
    // the request; the client retries.
    throw new ApiError('internal_error');
  }

  private async issue(
    body: Static<typeof ValidateSuccess>,
    license: LicenseForIdentity,
    identity: Identity,
    now: Date,
  ): Promise<Static<typeof Receipt>> {
    const { receipt_grace_days } = await this.settings.get();
    const e = body.entitlements;
    const claims: ReceiptPayload = {
      v: 1,
      license_id: license.id,
      product_id: body.product_id,
      variation_id: body.variation_id,
      installation_id: identity.installation_id,
      domain: identity.domain_normalized,
      activation_id: license.identity_activation_id!,
      status: 'valid',
      usage_expires_at: e.usage_expires_at,
      updates_expires_at: e.updates_expires_at,
      support_expires_at: e.support_expires_at,
      update_entitled: e.update_entitled,
      support_active: e.support_active,
      issued_at: rfc3339(now),
      valid_until: rfc3339(new Date(now.getTime() + receipt_grace_days * DAY_MS)),
    };
    const payload = Buffer.from(JSON.stringify(claims), 'utf8').toString('base64url');
    // The signature covers the payload exactly as sent: its base64url text's ASCII bytes.
    const { keyId, signature } = await this.signer.sign(Buffer.from(payload, 'ascii'));
    return { payload, signature: signature.toString('base64'), signing_key_id: keyId };
  }
}
