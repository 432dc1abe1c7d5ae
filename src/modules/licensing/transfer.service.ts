import { type Clock, iso, rfc3339 } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { type Tx, withTransaction } from '../../db/transaction.js';
import { ApiError } from '../../http/errors.js';
import type { RateCounter } from '../../http/rate-limit.js';
import { randomHex, safeEqual, sha256 } from '../../random.js';
import { type AccountsService, type AuthUser, normaliseEmail } from '../accounts/accounts.service.js';
import type { Actor } from '../audit/audit.model.js';
import type { AuditService } from '../audit/audit.service.js';
import type { Outbox } from '../webhooks/outbox.js';
import type { ActivationService } from './activation.service.js';
import type { LicenseRepository } from './license.repository.js';
import type { TransferDetail, TransferRepository, TransferRow } from './transfer.repository.js';

/** How long a transfer's link works. */
export const TRANSFER_DAYS = 7;
/** Transfers a customer may send in TRANSFER_RATE_WINDOW (each one emails an address they choose). */
export const MAX_TRANSFERS_PER_CUSTOMER = 10;
export const TRANSFER_RATE_WINDOW = 3600;
const DAY_MS = 86_400_000;
const TOKEN_PATTERN = /^[0-9a-f]{64}$/;

export type TransferState = 'pending' | 'accepted' | 'cancelled' | 'replaced' | 'expired';

export interface TransferView {
  id: number;
  license_id: number;
  from_user_id: number;
  to_email: string;
  keep_activations: boolean;
  /** `expired`: pending past `expires_at` (computed, as a license's `expired` is). */
  status: TransferState;
  to_user_id: number | null;
  expires_at: string;
  accepted_at: string | null;
  cancelled_at: string | null;
  created_at: string;
}

/** Who sends or cancels: the owner in the console (an administrator), or the license's customer. */
export interface Sender {
  user_id: number;
  email: string;
  administrator: boolean;
}

/** Runs in the transaction that offers a license (src/wiring.ts: the email carrying the link). */
export type TransferHook = (transfer: TransferDetail, tx: Tx) => Promise<void>;

const ts = (text: string | null) => (text === null ? null : rfc3339(new Date(text)));

/**
 * License transfers (docs/selling.md, 'Transfers'): the owner or the license's customer offers a
 * license to the account of an email; the receiver accepts once by the emailed link. The link's
 * token is minted when the email is sent and only its SHA-256 is stored. The accept moves the
 * license, deactivates its sites unless the sender kept them, records the audit entry and the
 * `license.transferred` webhook in one transaction; the offer's row lock (PostgreSQL) and its
 * pending-only update make a second, parallel accept of the same link a 409.
 */
export class TransferService {
  private readonly offeredHooks: TransferHook[] = [];

  constructor(
    private readonly database: Pick<Database, 'db'>,
    private readonly repo: TransferRepository,
    private readonly licenses: LicenseRepository,
    private readonly activations: Pick<ActivationService, 'deactivateAllIn'>,
    private readonly accounts: Pick<AccountsService, 'accountFor' | 'getUser'>,
    private readonly outbox: Outbox,
    private readonly audit: AuditService,
    private readonly clock: Clock,
    private readonly rates: Pick<RateCounter, 'hit'>,
  ) {}

  onOffered(hook: TransferHook): void {
    this.offeredHooks.push(hook);
  }

  view(row: TransferRow): TransferView {
    const expired = row.status === 'pending' && row.expires_at <= iso(this.clock.now());
    return {
      id: Number(row.id),
      license_id: row.license_id,
      from_user_id: row.from_user_id,
      to_email: row.to_email,
      keep_activations: row.keep_activations === 1,
      status: expired ? 'expired' : row.status,
      to_user_id: row.to_user_id,
      expires_at: ts(row.expires_at)!,
      accepted_at: ts(row.accepted_at),
      cancelled_at: ts(row.cancelled_at),
      created_at: ts(row.created_at)!,
    };
  }

  /**
   * Offers a license to the account of `email`; a pending offer of the same license is replaced
   * (its link stops working). A customer may offer only their own license (else 404, as for any
   * license not theirs), and at most MAX_TRANSFERS_PER_CUSTOMER an hour.
   */
  async offer(
    licenseId: number,
    input: { email: string; keep_activations?: boolean },
    by: Sender,
  ): Promise<TransferView> {
    if (!by.administrator) {
      const hit = await this.rates.hit(`transfer:user:${by.user_id}`, TRANSFER_RATE_WINDOW);
      if (hit.count > MAX_TRANSFERS_PER_CUSTOMER) {
        throw new ApiError('too_many_transfers', { data: { retry_after: hit.retryAfter } });
      }
    }
    const email = normaliseEmail(input.email);
    // The license's row lock (PostgreSQL; SQLite has one writer) makes parallel offers of one
    // license replace each other in turn, so the pending index never refuses one.
    return withTransaction(this.database, async (tx) => {
      const license = await this.licenses.lockLicense(licenseId, tx);
      if (!license || (!by.administrator && license.user_id !== by.user_id)) {
        throw new ApiError('license_not_found');
      }
      if (license.status !== 'active') throw new ApiError('license_not_transferable');
      const owner = await this.accounts.getUser(license.user_id, tx);
      if (owner && normaliseEmail(owner.email) === email) throw new ApiError('transfer_to_self');
      const now = this.clock.now();
      const pending = await this.repo.pendingOf(licenseId, tx);
      if (pending) {
        await this.repo.settle(Number(pending.id), { status: 'replaced', updated_at: iso(now) }, tx);
      }
      const id = await this.repo.insert(
        {
          license_id: licenseId,
          from_user_id: license.user_id,
          to_email: email,
          keep_activations: input.keep_activations === false ? 0 : 1,
          status: 'pending',
          token_hash: null,
          to_user_id: null,
          created_by: by.user_id,
          expires_at: iso(new Date(now.getTime() + TRANSFER_DAYS * DAY_MS)),
          accepted_at: null,
          cancelled_at: null,
          created_at: iso(now),
          updated_at: iso(now),
        },
        tx,
      );
      await this.audit.record(
        actorOf(by),
        {
          entity_type: 'license',
          entity_id: licenseId,
          action: 'transfer_offer',
          changes: {
            transfer_to: { before: pending?.to_email ?? null, after: email },
            keep_activations: { before: null, after: input.keep_activations !== false },
          },
        },
        tx,
      );
      const row = (await this.repo.findById(id, tx))!;
      const detail: TransferDetail = {
        ...row,
        product_name: (await this.licenses.findById(licenseId, tx))?.product_name ?? null,
        from_email: owner?.email ?? null,
      };
      for (const hook of this.offeredHooks) await hook(detail, tx);
      return this.view(row);
    });
  }

  /** A license's offers, newest first (the console's license screen); 404 for an unknown license. */
  async listOfLicense(licenseId: number): Promise<TransferView[]> {
    if (!(await this.licenses.findById(licenseId))) throw new ApiError('license_not_found');
    return (await this.repo.listOfLicense(licenseId)).map((r) => this.view(r));
  }

  /** The pending offers of the licenses a customer owns (My licenses). */
  async pendingOfOwner(userId: number): Promise<TransferView[]> {
    return (await this.repo.pendingOfOwner(userId)).map((r) => this.view(r));
  }

  /**
   * Cancels a pending offer: the owner any, a customer those of the licenses they own (another's
   * is 404). An accepted one is 409 `transfer_already_accepted`; one cancelled or replaced already
   * is 404, as one that never existed.
   */
  async cancel(transferId: number, by: Sender): Promise<TransferView> {
    return withTransaction(this.database, async (tx) => {
      const found = await this.repo.findById(transferId, tx);
      if (!found) throw new ApiError('transfer_not_found');
      // Every change of an offer locks its license first (offer, cancel, accept): one order, no deadlock.
      const license = await this.licenses.lockLicense(found.license_id, tx);
      if (!by.administrator && license?.user_id !== by.user_id) throw new ApiError('transfer_not_found');
      // Read again under the license's lock: an accept or a new offer may have settled it meanwhile.
      const transfer = (await this.repo.findById(transferId, tx))!;
      if (transfer.status === 'accepted') throw new ApiError('transfer_already_accepted');
      const now = iso(this.clock.now());
      const cancelled = { status: 'cancelled' as const, cancelled_at: now, updated_at: now };
      if (!(await this.repo.settle(transferId, cancelled, tx))) throw new ApiError('transfer_not_found');
      await this.audit.record(
        actorOf(by),
        {
          entity_type: 'license',
          entity_id: transfer.license_id,
          action: 'transfer_cancel',
          changes: { transfer_to: { before: transfer.to_email, after: null } },
        },
        tx,
      );
      return this.view({ ...transfer, ...cancelled });
    });
  }

  /**
   * A fresh token for the offer's link (the mail worker asks when it sends the email): only its
   * SHA-256 is stored, replacing the last one. Null once the offer is no longer pending or expired.
   */
  async mintToken(transferId: number): Promise<string | null> {
    const token = randomHex(32);
    return (await this.repo.setToken(transferId, sha256(token), iso(this.clock.now()))) ? token : null;
  }

  /** What the accept page shows of the offer a link names; the refusals are accept's. */
  async preview(token: string): Promise<TransferDetail> {
    const hash = hashOf(token);
    const found = await this.repo.detailByToken(hash);
    if (!found?.token_hash || !safeEqual(found.token_hash, hash)) throw new ApiError('transfer_not_found');
    this.assertOpen(found);
    return found;
  }

  private assertOpen(transfer: TransferRow): void {
    if (transfer.status === 'accepted') throw new ApiError('transfer_already_accepted');
    if (transfer.status !== 'pending') throw new ApiError('transfer_not_found');
    if (transfer.expires_at <= iso(this.clock.now())) throw new ApiError('transfer_expired');
  }

  /**
   * Accepts by the link's token, once: the license goes to the account of the offer's email (made
   * now, as checkout makes one, when there is none). `signedIn`, the account of the session that
   * accepts, must be that account (403 `transfer_wrong_account`).
   */
  async accept(
    token: string,
    signedIn?: { id: number },
  ): Promise<{ transfer: TransferView; user: AuthUser; created: boolean }> {
    const hash = hashOf(token);
    return withTransaction(this.database, async (tx) => {
      const named = await this.repo.findByToken(hash, tx);
      if (!named?.token_hash || !safeEqual(named.token_hash, hash)) throw new ApiError('transfer_not_found');
      // The license first, as offer and cancel lock it; then the offer, read again under the lock.
      const license = await this.licenses.lockLicense(named.license_id, tx);
      const transfer = await this.repo.lockByToken(hash, tx);
      if (!transfer) throw new ApiError('transfer_not_found');
      this.assertOpen(transfer);
      if (!license || license.user_id !== transfer.from_user_id) throw new ApiError('transfer_not_found');
      if (license.status !== 'active') throw new ApiError('license_not_transferable');
      const { user, created } = await this.accounts.accountFor(transfer.to_email, tx);
      if (signedIn && signedIn.id !== user.id) throw new ApiError('transfer_wrong_account');
      if (user.id === license.user_id) throw new ApiError('transfer_to_self');
      const now = iso(this.clock.now());
      const accepted = {
        status: 'accepted' as const,
        to_user_id: user.id,
        accepted_at: now,
        updated_at: now,
      };
      // Pending-only: of two accepts that both read it pending (SQLite's reads), one moves it.
      if (!(await this.repo.settle(Number(transfer.id), accepted, tx))) {
        throw new ApiError('transfer_already_accepted');
      }
      await this.licenses.updateLicense(license.id, { user_id: user.id, updated_at: now }, tx);
      const deactivated =
        transfer.keep_activations === 1 ? 0 : await this.activations.deactivateAllIn(license.id, tx);
      await this.outbox.record(
        'license.transferred',
        { license_id: license.id, from_user_id: license.user_id, to_user_id: user.id },
        tx,
      );
      await this.audit.record(
        { user_id: user.id, email: user.email },
        {
          entity_type: 'license',
          entity_id: license.id,
          action: 'transfer',
          changes: {
            user_id: { before: license.user_id, after: user.id },
            ...(deactivated > 0 ? { active_activations: { before: deactivated, after: 0 } } : {}),
          },
        },
        tx,
      );
      return { transfer: this.view({ ...transfer, ...accepted }), user, created };
    });
  }
}

const actorOf = (by: Sender): Actor => ({ user_id: by.user_id, email: by.email });

/** A malformed token names no offer: it is never looked up. */
function hashOf(token: string): string {
  if (!TOKEN_PATTERN.test(token)) throw new ApiError('transfer_not_found');
  return sha256(token);
}
