import { type Clock, iso } from '../../clock.js';
import { type Tx, withTransaction } from '../../db/transaction.js';
import { ApiError } from '../../http/errors.js';
import { sha256 } from '../../random.js';
import { isPublicProduct } from '../catalogue/catalogue.model.js';
import type { CatalogueService } from '../catalogue/catalogue.service.js';
import { identityKey } from '../identity/identity.js';
import { evaluateLicense, graceInstant } from '../licensing/entitlements.js';
import type { LicenseLookupService } from '../licensing/license-lookup.service.js';
import { type ArtifactRow, type Release, SHA256_HEX, toRelease } from '../releases/releases.model.js';
import type { OpenedArtifact, ReleasesService } from '../releases/releases.service.js';
import type { StatSnapshot } from '../releases/storage/driver.js';
import { refOf } from '../releases/storage/storage.js';
import type { SettingsService } from '../settings/settings.service.js';
import { authorizeRelease, PURPOSES } from './authorize.js';
import type { TokenBearers } from './bearer.js';
import type { TokenPurpose } from './distribution.tables.js';
import { BINDING_VERSION } from './tokens.js';
import type { ClaimActivation, ClaimLicense, TokenRow, TokensRepository } from './tokens.repository.js';

/**
 * Binding v1 complete: every field docs/distribution.md ('What a token is bound to') lists, and the
 * identity fields agree with each other.
 */
function bindingComplete(t: TokenRow): boolean {
  if (t.binding_version !== BINDING_VERSION) return false;
  if (!t.product_id || !t.release_id || !t.artifact_id || !SHA256_HEX.test(t.artifact_sha256)) return false;
  if (!PURPOSES.includes(t.purpose as TokenPurpose) || !t.created_at || !t.expires_at) return false;
  if (t.policy === 'public') return t.license_id === null && t.activation_id === null && t.user_id === null;
  if (t.policy === 'protected') {
    if (
      t.license_id === null ||
      t.activation_id === null ||
      t.activation_revision === null ||
      !t.identity_key ||
      !t.installation_id ||
      !t.domain_normalized ||
      t.user_id !== null
    )
      return false;
    return identityKey(t.installation_id, t.domain_normalized) === t.identity_key;
  }
  // An account token: the license and its owner, for an install, and nothing of a site.
  return (
    t.policy === 'account' &&
    t.purpose === 'install' &&
    t.license_id !== null &&
    t.user_id !== null &&
    t.activation_id === null &&
    t.activation_revision === null &&
    t.identity_key === null &&
    t.installation_id === null &&
    t.domain_normalized === null
  );
}

/**
 * Redemption of a single-use token (docs/distribution.md, '4. GET /software/download'): checks that
 * do not claim, the artifact pre-check (a full SHA-256 or authenticated pass), then one short
 * transaction that re-checks everything the token was bound to and claims it; it commits before the
 * first byte is sent.
 */
export class DownloadService {
  constructor(
    private readonly repo: TokensRepository,
    private readonly bearers: Pick<TokenBearers, 'locate'>,
    private readonly releases: ReleasesService,
    private readonly catalogue: Pick<CatalogueService, 'softwareStatus'>,
    private readonly licenses: Pick<LicenseLookupService, 'lockWithSubscription' | 'lockActivation'>,
    private readonly settings: SettingsService,
    private readonly clock: Clock,
  ) {}

  async redeem(token: string): Promise<{ file: OpenedArtifact; productId: number }> {
    const settings = await this.settings.get();
    if (!settings.software_enabled) throw new ApiError('module_disabled');
    // A token is 64 lowercase hex characters (32 bytes, TokenBearers): the form of a SHA-256.
    const found = SHA256_HEX.test(token)
      ? await this.repo.findRedeemable(await this.bearers.locate(token), sha256(token))
      : undefined;
    if (!found) throw new ApiError('invalid_token');
    const row = found.token;
    if (this.clock.now().getTime() >= new Date(row.expires_at).getTime()) throw new ApiError('token_expired');
    if (row.invalidated_at !== null) throw new ApiError('token_invalidated');
    if (!bindingComplete(row)) throw new ApiError('token_binding_required');
    if (row.used_at !== null) throw new ApiError('token_consumed');

    if (!found.release) throw new ApiError('release_not_found');
    // A release always has its artifact row (a foreign key): kept from a 500 all the same.
    if (!found.artifact) throw new ApiError('artifact_not_found');
    const release = toRelease(found.release, found.artifact);
    this.releases.assertPublished(release);
    if (release.manual_download_only) throw new ApiError('updater_external_link_prohibited');
    if (release.artifact_id !== row.artifact_id || release.file_sha256 !== row.artifact_sha256) {
      throw new ApiError('release_binding_changed');
    }
    // Reads every byte (local: SHA-256; encrypted: every chunk authenticated) before any claim.
    const snapshot = await this.releases.precheckArtifact(release, found.artifact);

    const artifact = await withTransaction(this.repo.database, (tx) => this.claimIn(row, snapshot, tx));
    // Committed: from here on a failure never reopens the token (a broken transfer does not give it
    // back). The artifact row is the one the transaction read.
    return { file: await this.releases.openArtifact(release, artifact), productId: release.product_id };
  }

  /**
   * Everything the claim re-checks: one statement when every row is there (TokensRepository.
   * lockForClaim), else each row on its own, in the order the checks below name them, so that the
   * precise error is answered.
   */
  private async claimRows(token: TokenRow, tx: Tx): Promise<ClaimState> {
    const joined = await this.repo.lockForClaim(token, tx);
    // The joined artifact is the release's: the binding check below makes it the token's.
    if (joined) return { ...joined, locked: true, release: toRelease(joined.release, joined.artifact) };
    const locked = (await this.repo.lockToken(token.id, tx)) !== undefined;
    const release = await this.releases.lockRelease(token.release_id, tx);
    const product = await this.catalogue.softwareStatus(token.product_id, tx);
    const found =
      token.policy === 'public' ? undefined : await this.licenses.lockWithSubscription(token.license_id!, tx);
    const activation =
      token.policy === 'protected' ? await this.licenses.lockActivation(token.activation_id!, tx) : undefined;
    const artifact = await this.releases.artifactIn(token.artifact_id, tx);
    return {
      locked,
      release,
      product,
      license: found?.license,
      subscriptionStatus: found?.subscriptionStatus ?? null,
      activation,
      artifact,
    };
  }

  private async claimIn(token: TokenRow, snapshot: StatSnapshot, tx: Tx): Promise<ArtifactRow> {
    const { locked, release, product, license, subscriptionStatus, activation, artifact } =
      await this.claimRows(token, tx);
    if (!locked) throw new ApiError('invalid_token');
    if (!release) throw new ApiError('release_not_found');
    this.releases.assertPublished(release);
    if (
      release.product_id !== token.product_id ||
      release.artifact_id !== token.artifact_id ||
      release.file_sha256 !== token.artifact_sha256
    ) {
      throw new ApiError('release_binding_changed');
    }
    if (product?.status !== 'publish' || product.software_enabled !== 'yes') {
      throw new ApiError('software_product_unavailable');
    }
    // A protected and an account token both need a protected product (one that became public
    // answers license_policy_changed), a public token a public one.
    if ((token.policy === 'public') !== isPublicProduct(product))
      throw new ApiError('license_policy_changed');

    const now = this.clock.now();
    // Protected and account tokens share the license checks, written once and inline (the download
    // route is the hottest after validate: no extra call or promise for a protected token).
    if (token.policy !== 'public') {
      const settings = await this.settings.get(tx);
      if (!settings.licensing_enabled) throw new ApiError('licensing_unavailable');
      if (!license) throw new ApiError('invalid_license');
      if (license.product_id !== token.product_id) throw new ApiError('license_product_mismatch');
      // An account token's license must still be its customer's: one moved to another customer is
      // licensing's `unauthorized` ("you do not own this license"). user_id is null on the others.
      if (token.user_id !== null && license.user_id !== token.user_id) throw new ApiError('unauthorized');
      const ev = evaluateLicense(
        {
          status: license.status,
          usage_expires_at: license.usage_expires_at,
          entitlement_policy: license.entitlement_policy,
          created_at: license.created_at,
          subscription_linked: license.subscription_id !== null,
          subscription_status: subscriptionStatus,
          trial: license.trial === 1,
        },
        graceInstant(now, settings.renewal_grace_days),
      );
      if (ev.effective_status !== 'valid') throw new ApiError(ev.effective_status);
      const denied = authorizeRelease(ev.entitlements, release, license.product_id, token.purpose);
      if (denied) throw new ApiError(denied);
      // An account token binds no site; a protected token's activation must be as it was.
      if (token.policy === 'protected') {
        if (activation?.status !== 'active') throw new ApiError('activation_inactive');
        if (
          activation.license_id !== token.license_id ||
          activation.activation_revision !== token.activation_revision ||
          activation.identity_key !== token.identity_key ||
          activation.installation_id !== token.installation_id ||
          activation.domain_normalized !== token.domain_normalized
        ) {
          throw new ApiError('activation_binding_changed');
        }
      }
    }

    if (!artifact) throw new ApiError('artifact_not_found');
    const driver = this.releases.storage.driver(artifact.driver);
    if (!driver.stat) throw new ApiError('storage_stat_unsupported');
    const stat = await driver.stat(refOf(artifact));
    if (!stat.exists || stat.size !== snapshot.size || stat.mtimeMs !== snapshot.mtimeMs) {
      throw new ApiError('artifact_changed');
    }
    const at = iso(now);
    if (this.repo.database.dialect === 'postgres') {
      // One statement claims and counts: a round trip less.
      if (!(await this.repo.claimCounting(token.id, release.version_id, at, tx))) {
        throw new ApiError('token_consumed');
      }
    } else {
      // SQLite runs in the process: two statements cost no round trip.
      if (!(await this.repo.claim(token.id, at, tx))) throw new ApiError('token_consumed');
      await this.releases.recordDownload(release.version_id, tx);
    }
    return artifact;
  }
}

/** The rows the claim re-checks, however they were read (DownloadService.claimRows). */
interface ClaimState {
  /** The token row is still there. */
  locked: boolean;
  release: Release | null | undefined;
  product: { status: string; licensing_enabled: string | null; software_enabled: string | null } | undefined;
  license: ClaimLicense | undefined;
  subscriptionStatus: string | null;
  activation: ClaimActivation | undefined;
  /** The token's artifact. */
  artifact: ArtifactRow | undefined;
}
