import { type Clock, iso, mysqlTime, Occasionally } from '../../clock.js';
import { ApiError } from '../../http/errors.js';
import { sha256 } from '../../random.js';
import type { Release } from '../releases/releases.model.js';
import type { SettingsService } from '../settings/settings.service.js';
import type { Bearer, TokenBearers } from './bearer.js';
import type { TokenPurpose } from './distribution.tables.js';
import type { Grant } from './preflight.js';
import type { TokensRepository } from './tokens.repository.js';

export const BINDING_VERSION = 1;

/**
 * A token that expired this long ago is deleted: it can never be redeemed again, and every
 * eligible update check mints one, so a store would otherwise keep a row for each check forever.
 * Until then a used, invalidated or expired token answers its own code; after, `invalid_token`.
 */
export const TOKEN_RETENTION_MS = 7 * 86_400_000;
const PRUNE_EVERY_MS = 3_600_000;
const PRUNE_BATCH = 500;

export interface MintedToken {
  download_url: string;
  token_expires_at: string;
  token_binding_version: number;
}

/** What an account token is bound to besides the release: the license and its owner (no site). */
export interface AccountGrant {
  productId: number;
  licenseId: number;
  userId: number;
}

function generationFailed(cause: unknown): never {
  throw Object.assign(new ApiError('token_generation_failed'), { cause });
}

/**
 * Issues single-use download tokens bound to everything they were issued for (docs/distribution.md,
 * 'What a token is bound to').
 */
export class TokenIssuer {
  constructor(
    private readonly repo: TokensRepository,
    private readonly bearers: TokenBearers,
    private readonly settings: SettingsService,
    private readonly clock: Clock,
    private readonly downloadUrl: () => string,
  ) {}

  async mint(grant: Grant, release: Release, purpose: TokenPurpose): Promise<MintedToken> {
    // Every column written out, not a spread of the common part plus the bound ones: this runs for
    // every token issued (each eligible check), and on Node 20 each property added after a spread
    // costs about a microsecond (docs/performance.md, 'Object literals, timestamps and hooks').
    const p = grant.kind === 'protected' ? grant : null;
    return this.issue((token_hash, token_locator, created_at, expires_at) =>
      this.repo.insert({
        token_hash,
        token_locator,
        binding_version: BINDING_VERSION,
        policy: grant.kind,
        product_id: grant.product.id,
        release_id: release.version_id,
        artifact_id: release.artifact_id,
        artifact_sha256: release.file_sha256,
        purpose,
        license_id: p ? p.license.id : null,
        activation_id: p ? p.activationId : null,
        // As the preflight read it; redemption refuses the token if the binding changed since.
        activation_revision: p ? p.activationRevision : null,
        identity_key: p ? p.identity.identity_key : null,
        installation_id: p ? p.identity.installation_id : null,
        domain_normalized: p ? p.identity.domain_normalized : null,
        created_at,
        expires_at,
        used_at: null,
        invalidated_at: null,
        invalidated_reason: null,
      }),
    );
  }

  /**
   * An account token (policy `account`, purpose `install`): a signed-in customer's download of a
   * release their license is entitled to, bound to the license and the customer instead of a site
   * (docs/distribution.md, 'What a token is bound to'). The caller has checked everything; the same
   * single use, expiry and redemption as every token.
   */
  async mintForAccount(grant: AccountGrant, release: Release): Promise<MintedToken> {
    return this.issue((token_hash, token_locator, created_at, expires_at) =>
      this.repo.insertAccount({
        token_hash,
        token_locator,
        binding_version: BINDING_VERSION,
        policy: 'account',
        product_id: grant.productId,
        release_id: release.version_id,
        artifact_id: release.artifact_id,
        artifact_sha256: release.file_sha256,
        purpose: 'install',
        license_id: grant.licenseId,
        activation_id: null,
        activation_revision: null,
        identity_key: null,
        installation_id: null,
        domain_normalized: null,
        user_id: grant.userId,
        created_at,
        expires_at,
        used_at: null,
        invalidated_at: null,
        invalidated_reason: null,
      }),
    );
  }

  /**
   * What every token shares: a new bearer (TokenBearers), its expiry from `token_expiry`, the row
   * written by `write` (the bearer's hash and locator and the times given), an occasional prune, and
   * the URL. Only the bearer's SHA-256 is stored.
   */
  private async issue(
    write: (tokenHash: string, locator: number, createdAt: string, expiresAt: string) => Promise<unknown>,
  ): Promise<MintedToken> {
    const settings = this.settings.current() ?? (await this.settings.get());
    const now = this.clock.now();
    if (!this.bearers.loaded) await this.bearers.load().catch(generationFailed);
    const { bearer: token, locator } = this.newBearer(now.getTime());
    const expires = new Date(now.getTime() + settings.token_expiry * 60_000);
    try {
      await write(sha256(token), locator, iso(now), iso(expires));
    } catch (e) {
      throw Object.assign(new ApiError('token_write_failed'), { cause: e });
    }
    this.pruning.maybe(now);
    return {
      download_url: `${this.downloadUrl()}?token=${token}`,
      token_expires_at: mysqlTime(expires),
      token_binding_version: BINDING_VERSION,
    };
  }

  private newBearer(nowMs: number): Bearer {
    try {
      return this.bearers.mint(nowMs);
    } catch (e) {
      return generationFailed(e);
    }
  }

  /** At most once an hour per process, after a mint: tokens are only ever added by minting. */
  private readonly pruning = new Occasionally(PRUNE_EVERY_MS, () => this.prune());

  /**
   * Deletes the tokens past retention, in batches with a turn of the event loop between them, so
   * that a backlog never holds the database (or, on SQLite, the event loop) for long. Answers how
   * many were deleted.
   */
  async prune(): Promise<number> {
    const before = iso(new Date(this.clock.now().getTime() - TOKEN_RETENTION_MS));
    let total = 0;
    for (;;) {
      const n = await this.repo.pruneExpired(before, PRUNE_BATCH);
      total += n;
      if (n < PRUNE_BATCH) return total;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
}
