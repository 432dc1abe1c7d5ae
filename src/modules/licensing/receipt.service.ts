import type { Static } from 'typebox';
import { type Clock, rfc3339 } from '../../clock.js';
import { type Identity, resolveIdentity } from '../identity/identity.js';
import type { SettingsService } from '../settings/settings.service.js';
import type { Signature } from '../signing/signing.module.js';
import type { Receipt } from './activation.schemas.js';
import type { ActivationService, ValidateResult } from './activation.service.js';

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
 * one carries `receipt` signed with the store's active signing key, from validate's own read (the
 * ids it names come with validate's result). Validate without `receipt` never comes here.
 */
export class ReceiptService {
  constructor(
    private readonly activations: ActivationService,
    private readonly clock: Clock,
    private readonly settings: SettingsService,
    private readonly signer: { sign(data: Buffer): Promise<Signature> },
  ) {}

  /** Signs exactly what validate answered, from the same read: nothing is read twice. */
  async validate(input: ValidateInput): Promise<ValidateResult> {
    const result = await this.activations.validate(input);
    if (result.status !== 200) return result;
    const identity = resolveIdentity(input.domain, input.installation_id);
    result.body.receipt = await this.issue(result, identity, this.clock.now());
    return result;
  }

  private async issue(
    { body, license_id, activation_id }: Extract<ValidateResult, { status: 200 }>,
    identity: Identity,
    now: Date,
  ): Promise<Static<typeof Receipt>> {
    const { receipt_grace_days } = await this.settings.get();
    const e = body.entitlements;
    const claims: ReceiptPayload = {
      v: 1,
      license_id,
      product_id: body.product_id,
      variation_id: body.variation_id,
      installation_id: identity.installation_id,
      domain: identity.domain_normalized,
      activation_id,
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
