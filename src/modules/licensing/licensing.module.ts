import type { FastifyBaseLogger } from 'fastify';
import type { Clock, TestClock } from '../../clock.js';
import type { AppSecrets } from '../../db/app-secrets.js';
import type { Database } from '../../db/database.js';
import type { RateCounter } from '../../http/rate-limit.js';
import type { AccountsService } from '../accounts/accounts.service.js';
import type { AuditService } from '../audit/audit.module.js';
import type { SettingsService } from '../settings/settings.service.js';
import type { SigningService } from '../signing/signing.module.js';
import type { Outbox } from '../webhooks/outbox.js';
import { ActivationService } from './activation.service.js';
import { LastSeen } from './last-seen.js';
import { LicenseRepository } from './license.repository.js';
import { LicenseService } from './license.service.js';
import { LicenseLookupService } from './license-lookup.service.js';
import { OAuthRepository } from './oauth.repository.js';
import { OAuthService } from './oauth.service.js';
import { StateSigner } from './oauth.state.js';
import { ReceiptService } from './receipt.service.js';
import { RenewalLinks } from './renewal-links.js';
import { StaleActivationWorker } from './stale-activations.worker.js';
import { TransferRepository } from './transfer.repository.js';
import { TransferService } from './transfer.service.js';

export interface LicensingModule {
  /** License administration and the customer's licenses (docs/licensing.md). */
  licenses: LicenseService;
  /** Activate, validate, deactivate (docs/licensing.md). */
  activations: ActivationService;
  /** Customer-approval activation: signed state, approval, activation tokens (docs/oauth.md). */
  oauth: OAuthService;
  /** What other modules read of licenses and activations (distribution). */
  lookup: LicenseLookupService;
  /** Validate with a signed offline receipt (docs/licensing.md, 'Offline receipts'). */
  receipts: ReceiptService;
  /** Each site's last_seen_at, written at most once an hour (docs/licensing.md, 'Last seen and stale activations'). */
  lastSeen: LastSeen;
  /** Releases sites unseen for `stale_activation_days`; started when the server listens. */
  staleActivations: StaleActivationWorker;
  /** License transfers to another customer (docs/selling.md, 'Transfers'). */
  transfers: TransferService;
  /** The signed one-click renewal links of term licenses (docs/selling.md, 'Renewals'). */
  renewalLinks: RenewalLinks;
}

/**
 * Builds the licensing module on one license repository. The hooks by which other modules act in
 * its transactions (a deactivation, a revocation) are registered in src/wiring.ts.
 */
export function createLicensing(deps: {
  database: Database;
  clock: Clock;
  settings: SettingsService;
  outbox: Outbox;
  /** The owners of licenses; a transfer's receiver gets an account as checkout makes one. */
  users: Pick<AccountsService, 'getUser' | 'accountFor'>;
  /** Counts the transfers a customer sends. */
  rates: Pick<RateCounter, 'hit'>;
  secrets: AppSecrets;
  /** Absolute URL of the approval page; the public origin is final only once the server listens. */
  approvalPage: () => string;
  /** Absolute URL of the renewal link's page (`/renew`). */
  renewalPage: () => string;
  /** Replaces the license repository (tests make one database step fail on purpose). */
  licenseRepository?: LicenseRepository;
  /** Records the administrator's changes to licenses (docs/admin.md, 'Audit trail'). */
  audit: AuditService;
  /** Signs offline receipts with the store's active key (docs/administration.md, 'Signing keys'). */
  signing: Pick<SigningService, 'sign'>;
  /** Where a failed last_seen_at write or stale-activation pass is reported (it never fails a request). */
  log: FastifyBaseLogger;
  /** The stale-activation job follows the test clock when there is one. */
  testClock: TestClock | null;
}): LicensingModule {
  const { database, clock, settings } = deps;
  const repo = deps.licenseRepository ?? new LicenseRepository(database);
  const oauth = new OAuthService(
    new OAuthRepository(database.db),
    repo,
    new StateSigner(deps.secrets, clock),
    clock,
    settings,
    deps.approvalPage,
  );
  // An activation in approval mode goes through the customer's approval (docs/oauth.md).
  const activations = new ActivationService(repo, clock, settings, deps.audit, oauth);
  // One record of writes per process, shared by validate and the update routes.
  const lastSeen = new LastSeen(repo, clock, (err) => deps.log.warn({ err }, 'last_seen_at write failed'));
  activations.trackLastSeen(lastSeen);
  const licenses = new LicenseService(repo, clock, settings, deps.outbox, deps.users, deps.audit);
  const receipts = new ReceiptService(activations, clock, settings, deps.signing);
  const transfers = new TransferService(
    database,
    new TransferRepository(database),
    repo,
    activations,
    deps.users,
    deps.outbox,
    deps.audit,
    clock,
    deps.rates,
  );
  return {
    transfers,
    licenses,
    activations,
    oauth,
    lookup: new LicenseLookupService(repo, lastSeen),
    receipts,
    lastSeen,
    renewalLinks: new RenewalLinks(deps.secrets, clock, deps.renewalPage),
    staleActivations: new StaleActivationWorker(
      repo,
      activations,
      settings,
      deps.audit,
      deps.outbox,
      clock,
      deps.testClock,
      deps.log,
    ),
  };
}
