import { type Clock, iso, rfc3339 } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { isUniqueViolation } from '../../db/errors.js';
import { withTransaction } from '../../db/transaction.js';
import { ApiError } from '../../http/errors.js';
import type { AccountsService } from '../accounts/accounts.service.js';
import { normaliseEmail } from '../accounts/accounts.service.js';
import type { CatalogueService } from '../catalogue/catalogue.service.js';
import { normaliseDomainOrThrow } from '../identity/identity.js';
import type { CreateLicenseInput, LicenseService } from './license.service.js';
import type { TrialClaim, TrialRepository } from './trial.repository.js';

export interface TrialInput {
  product_id: number;
  email: string;
  /** The site the trial is for; a site takes one trial of a product. */
  site?: string;
}

export interface Trial {
  license_key: string;
  product_id: number;
  usage_expires_at: string;
  activation_limit: number;
}

const DAY_MS = 86_400_000;

/**
 * Trials (docs/selling.md, 'Trials'): a license without payment, once per email and once per site
 * of a product. The unique index of `trial_claims` decides under parallel requests; the read
 * before it only spares a refused request from creating the customer's account.
 */
export class TrialService {
  constructor(
    private readonly database: Pick<Database, 'db'>,
    private readonly repo: TrialRepository,
    private readonly clock: Clock,
    private readonly catalogue: Pick<CatalogueService, 'getProduct'>,
    private readonly accounts: Pick<AccountsService, 'findByEmail' | 'createUser'>,
    private readonly licenses: Pick<LicenseService, 'create'>,
  ) {}

  async start(input: TrialInput): Promise<Trial> {
    const product = await this.catalogue.getProduct(input.product_id);
    if (product?.status !== 'publish') throw new ApiError('product_not_found');
    if (product.trial_days === null || product.licensing_enabled === 'no')
      throw new ApiError('trial_not_offered');
    const email = normaliseEmail(input.email);
    const claims: TrialClaim[] = [{ kind: 'email', value: email }];
    if (input.site !== undefined) claims.push({ kind: 'site', value: normaliseDomainOrThrow(input.site) });
    if (await this.repo.anyClaimed(product.id, claims)) throw new ApiError('trial_already_used');

    const customer = await this.customerOf(email);
    const now = this.clock.now();
    const license: CreateLicenseInput = {
      product_id: product.id,
      user_id: customer,
      activation_limit: product.trial_sites,
      usage_expires_at: rfc3339(new Date(now.getTime() + product.trial_days * DAY_MS)),
      entitlement_policy: (product.entitlement_policy as CreateLicenseInput['entitlement_policy']) ?? null,
      trial: true,
    };
    return withTransaction(this.database, async (tx) => {
      const created = await this.licenses.create(license, tx);
      try {
        await this.repo.insertClaims(
          claims.map((c) => ({ ...c, product_id: product.id, license_id: created.id, created_at: iso(now) })),
          tx,
        );
      } catch (e) {
        // The whole transaction rolls back: no license, no claim.
        if (isUniqueViolation(e)) throw new ApiError('trial_already_used');
        throw e;
      }
      return {
        license_key: created.license_key,
        product_id: product.id,
        usage_expires_at: license.usage_expires_at!,
        activation_limit: product.trial_sites,
      };
    });
  }

  /** The customer of that email, made as checkout makes one (the account mail lets them set a password). */
  private async customerOf(email: string): Promise<number> {
    const existing = await this.accounts.findByEmail(email);
    if (existing) return existing.id;
    try {
      return (await this.accounts.createUser({ email, password: null, via: 'checkout' })).id;
    } catch (e) {
      if (!(e instanceof ApiError && e.code === 'email_exists')) throw e;
      const user = await this.accounts.findByEmail(email);
      if (!user) throw e;
      return user.id;
    }
  }
}
