import { type Clock, iso, Occasionally } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { type Tx, withTransaction } from '../../db/transaction.js';
import { ApiError } from '../../http/errors.js';
import type { RateCounter } from '../../http/rate-limit.js';
import { randomHex, safeEqual, sha256, uuid } from '../../random.js';
import { type Actor, diff } from '../audit/audit.model.js';
import type { AuditService } from '../audit/audit.service.js';
import type { AccountsRepository, UserRow, UserSort } from './accounts.repository.js';
import type { PasswordTokenPurpose, Role } from './accounts.tables.js';
import {
  DUMMY_HASH,
  hashPassword,
  isImportedHash,
  needsRehash,
  unusableHash,
  verifyPassword,
} from './password.js';

export interface AuthUser {
  id: number;
  email: string;
  role: Role;
  first_name: string;
  last_name: string;
}

export const SESSION_DAYS = 7;
const LOGIN_WINDOW = 15 * 60;
const MAX_FAILS_PER_ACCOUNT = 5;
const MAX_FAILS_PER_IP = 20;

export const publicUser = (u: AuthUser) => ({
  id: u.id,
  email: u.email,
  role: u.role,
  first_name: u.first_name,
  last_name: u.last_name,
});

/**
 * How long an emailed link works, from when it is sent: a forgot-password link an hour, a new
 * account's set-password link 7 days, a sign-in link 15 minutes.
 */
export const PASSWORD_TOKEN_SECONDS: Record<PasswordTokenPurpose, number> = {
  reset: 3600,
  welcome: 7 * 86400,
  signin: 900,
};
/** The links that set a password (the reset page); a sign-in link is not one of them. */
const PASSWORD_PURPOSES: PasswordTokenPurpose[] = ['reset', 'welcome'];
/** Forgot-password requests: per address (beyond it nothing more is sent, silently) and per IP (429). */
const RESET_WINDOW = 3600;
const MAX_RESETS_PER_ACCOUNT = 3;
const MAX_RESETS_PER_IP = 10;
/**
 * Sign-in link requests (docs/api.md, 'Rate limits'): per email address and per client address in
 * a 15-minute window, counted whether or not the address has an account (the refusal tells nothing).
 */
export const SIGN_IN_LINK_WINDOW = 900;
export const MAX_SIGN_IN_LINKS_PER_EMAIL = 3;
export const MAX_SIGN_IN_LINKS_PER_IP = 10;
const TOKEN_PATTERN = /^[0-9a-f]{64}$/;

/** What runs in the transaction of an account event (src/wiring.ts: the mail outbox). */
export type AccountHook = (user: AuthUser, tx: Tx) => Promise<void>;

export const normaliseEmail = (email: string) => email.trim().toLowerCase();

export class AccountsService {
  /** Expired sessions are deleted at most once an hour per process, after a sign-in creates one. */
  private readonly sessionCleanup = new Occasionally(3_600_000, (now) =>
    this.repo.deleteExpiredSessions(iso(now)),
  );

  private resetHooks: AccountHook[] = [];
  private checkoutAccountHooks: AccountHook[] = [];
  private signInLinkHooks: AccountHook[] = [];

  constructor(
    private readonly repo: AccountsRepository,
    private readonly clock: Clock,
    private readonly rates: RateCounter,
    private readonly database: Pick<Database, 'db'>,
    private readonly audit: AuditService,
  ) {}

  /**
   * A customer carried over from another store (docs/migrating.md, 'Importing'): the account of
   * that email if there is one, else a new customer with the old store's password hash (checked at
   * sign-in by verifyPassword and replaced at the first use) or, without one, a password nobody
   * knows until the customer sets one. Answers the user id and whether it was made now.
   */
  async importCustomer(
    input: { email: string; first_name?: string; last_name?: string; password_hash?: string },
    tx?: Tx,
  ): Promise<{ id: number; created: boolean }> {
    const email = normaliseEmail(input.email);
    const existing = await this.repo.findUserByEmail(email, tx);
    if (existing) return { id: existing.id, created: false };
    const imported = input.password_hash && isImportedHash(input.password_hash) ? input.password_hash : null;
    const row = await this.repo.insertUser(
      {
        email,
        password_hash: imported ?? unusableHash(),
        password_set: imported !== null,
        role: 'customer',
        first_name: input.first_name ?? '',
        last_name: input.last_name ?? '',
        now: iso(this.clock.now()),
      },
      tx,
    );
    if (!row) throw new ApiError('email_exists');
    return { id: row.id, created: true };
  }

  async createUser(
    input: {
      email: string;
      /** null: an account no password opens until one is set (`unusableHash`), as checkout makes. */
      password: string | null;
      role?: Role;
      first_name?: string;
      last_name?: string;
      /** `checkout`: made for a guest's order; the account-created hooks run (its "set your password" email). */
      via?: 'checkout';
    },
    actor?: Actor,
  ): Promise<AuthUser> {
    const password_hash = input.password === null ? unusableHash() : await hashPassword(input.password);
    return withTransaction(this.database, async (tx) => {
      const row = await this.repo.insertUser(
        {
          email: normaliseEmail(input.email),
          password_hash,
          password_set: input.password !== null,
          role: input.role ?? 'customer',
          first_name: input.first_name ?? '',
          last_name: input.last_name ?? '',
          now: iso(this.clock.now()),
        },
        tx,
      );
      if (!row) throw new ApiError('email_exists');
      if (input.via === 'checkout') {
        for (const hook of this.checkoutAccountHooks) await hook(toAuthUser(row), tx);
      }
      // An administrator's new user is recorded without its password (docs/admin.md, 'Audit trail');
      // checkout's accounts and the command line's have no actor and are not recorded.
      if (actor) {
        const created = {
          email: row.email,
          role: row.role,
          first_name: row.first_name,
          last_name: row.last_name,
        };
        const changes = diff({}, created);
        await this.audit.record(
          actor,
          { entity_type: 'user', entity_id: row.id, action: 'create', changes },
          tx,
        );
      }
      return toAuthUser(row);
    });
  }

  /**
   * The account of an email in the caller's transaction, made now as checkout makes one when there
   * is none: a customer no password opens until one is set (a license transfer's receiver, docs/
   * selling.md 'Transfers'). A parallel insert of the same email is met by reading it back.
   */
  async accountFor(email: string, tx: Tx): Promise<{ user: AuthUser; created: boolean }> {
    const normalised = normaliseEmail(email);
    const existing = await this.repo.findUserByEmail(normalised, tx);
    if (existing) return { user: toAuthUser(existing), created: false };
    const row = await this.repo.insertUser(
      {
        email: normalised,
        password_hash: unusableHash(),
        password_set: false,
        role: 'customer',
        first_name: '',
        last_name: '',
        now: iso(this.clock.now()),
      },
      tx,
    );
    if (row) return { user: toAuthUser(row), created: true };
    const raced = await this.repo.findUserByEmail(normalised, tx);
    if (!raced) throw new ApiError('internal_error');
    return { user: toAuthUser(raced), created: false };
  }

  /** Makes sure this administrator exists with this password (ADMIN_EMAIL / ADMIN_PASSWORD, `user:create`). */
  async ensureAdministrator(email: string, password: string): Promise<AuthUser> {
    const existing = await this.repo.findUserByEmail(normaliseEmail(email));
    if (!existing) {
      try {
        return await this.createUser({ email, password, role: 'administrator' });
      } catch (e) {
        // Another process created it first; fall through and align its password and role.
        if (!(e instanceof ApiError)) throw e;
      }
    }
    const user = (await this.repo.findUserByEmail(normaliseEmail(email)))!;
    if (!(await verifyPassword(password, user.password_hash)) || user.role !== 'administrator') {
      await this.repo.updateUser(user.id, {
        password_hash: await hashPassword(password),
        role: 'administrator',
        now: iso(this.clock.now()),
      });
    }
    return { ...toAuthUser(user), role: 'administrator' };
  }

  /**
   * Verifies credentials under per-account and per-IP throttling of failures. Each attempt takes
   * its place in both counters before the password hash is computed, atomically (across processes
   * on PostgreSQL), so parallel attempts can never check more passwords than the limits allow; a
   * success, or an attempt that could not be checked, gives its places back.
   */
  async login(
    email: string,
    password: string,
    ip: string,
  ): Promise<{ user: AuthUser; sessionId: string; nonce: string }> {
    const normalised = normaliseEmail(email);
    const accountBucket = `login:acct:${sha256(normalised)}`;
    const account = await this.rates.take(accountBucket, LOGIN_WINDOW, MAX_FAILS_PER_ACCOUNT);
    if (!account.taken) throw tooManyAttempts(account.retryAfter);
    const ipBucket = `login:ip:${sha256(ip)}`;
    const byIp = await this.rates.take(ipBucket, LOGIN_WINDOW, MAX_FAILS_PER_IP);
    const giveBack = async () => {
      await this.rates.release(accountBucket, account.start);
      if (byIp.taken) await this.rates.release(ipBucket, byIp.start);
    };
    if (!byIp.taken) {
      await giveBack();
      throw tooManyAttempts(byIp.retryAfter);
    }
    let row: UserRow | undefined;
    let ok: boolean;
    try {
      row = await this.repo.findUserByEmail(normalised);
      ok = await verifyPassword(password, row?.password_hash ?? DUMMY_HASH);
    } catch (e) {
      await giveBack();
      throw e;
    }
    // A failure keeps its places: it is what the limits count.
    if (!row || !ok) throw new ApiError('invalid_credentials');
    await giveBack();
    // A password hash imported from another store gives way to Tollgate's own at its first use.
    if (needsRehash(row.password_hash)) {
      await this.repo.updateUser(row.id, {
        password_hash: await hashPassword(password),
        now: iso(this.clock.now()),
      });
    }
    const user = toAuthUser(row);
    return { user, ...(await this.startSession(user.id)) };
  }

  async startSession(userId: number): Promise<{ sessionId: string; nonce: string }> {
    const sessionId = randomHex(32);
    const nonce = randomHex(16);
    const now = this.clock.now();
    await this.repo.insertSession({
      id_hash: sha256(sessionId),
      user_id: userId,
      nonce,
      now: iso(now),
      expires_at: iso(new Date(now.getTime() + SESSION_DAYS * 86400_000)),
    });
    this.sessionCleanup.maybe(now);
    return { sessionId, nonce };
  }

  /**
   * The customer's own name (docs/storefront.md, 'Profile'): each part at most 100 characters,
   * trimmed, without control characters (`invalid_name`).
   */
  async updateName(userId: number, firstName: string, lastName: string): Promise<AuthUser> {
    const first = firstName.trim();
    const last = lastName.trim();
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
    const bad = (s: string) => s.length > 100 || /[\u0000-\u001f\u007f]/.test(s);
    if (bad(first) || bad(last)) throw new ApiError('invalid_name');
    await this.repo.updateUser(userId, { first_name: first, last_name: last, now: iso(this.clock.now()) });
    return this.requireUser(userId);
  }

  /** Whether the account has a password of its own (not checkout's unusable hash). */
  async hasPassword(userId: number): Promise<boolean> {
    return (await this.repo.findUserById(userId))?.password_set === 1;
  }

  /**
   * The signed-in user's new password (docs/storefront.md, 'Profile'). An account checkout made
   * without one sets its first password without a current one (`current` is not looked at); one
   * that has a password gives it: none is `current_password_required`, a wrong one is
   * `incorrect_current_password` and counts as a failed sign-in of the account (the same limit,
   * `too_many_login_attempts`). A new one outside 8–1024 characters is `invalid_password`. Every
   * other session of the user ends, and every emailed link is retired, in the change's
   * transaction; the session that asked (`keepSessionId`) stays.
   */
  async changePassword(
    userId: number,
    current: string | null,
    next: string,
    keepSessionId: string,
  ): Promise<void> {
    if (next.length < 8 || next.length > 1024) throw new ApiError('invalid_password');
    const row = await this.repo.findUserById(userId);
    if (!row) throw new ApiError('user_not_found');
    if (row.password_set === 0) return this.setFirstPassword(userId, next, keepSessionId);
    if (!current) throw new ApiError('current_password_required');
    const accountBucket = `login:acct:${sha256(normaliseEmail(row.email))}`;
    const account = await this.rates.take(accountBucket, LOGIN_WINDOW, MAX_FAILS_PER_ACCOUNT);
    if (!account.taken) throw tooManyAttempts(account.retryAfter);
    let ok: boolean;
    try {
      ok = current.length <= 1024 && (await verifyPassword(current, row.password_hash ?? DUMMY_HASH));
    } catch (e) {
      await this.rates.release(accountBucket, account.start);
      throw e;
    }
    // A failure keeps its place: it is what the limit counts.
    if (!ok) throw new ApiError('incorrect_current_password');
    await this.rates.release(accountBucket, account.start);
    const password_hash = await hashPassword(next);
    await withTransaction(this.database, async (tx) => {
      const now = iso(this.clock.now());
      await this.repo.updateUser(userId, { password_hash, now }, tx);
      await this.repo.retirePasswordTokens(userId, now, tx);
      await this.repo.deleteOtherSessions(userId, sha256(keepSessionId), tx);
    });
  }

  /** Only while the account still has no password: of two at once, the second needs the first's. */
  private async setFirstPassword(userId: number, next: string, keepSessionId: string): Promise<void> {
    const password_hash = await hashPassword(next);
    await withTransaction(this.database, async (tx) => {
      const now = iso(this.clock.now());
      if (!(await this.repo.setFirstPassword(userId, password_hash, now, tx))) {
        throw new ApiError('current_password_required');
      }
      await this.repo.retirePasswordTokens(userId, now, tx);
      await this.repo.deleteOtherSessions(userId, sha256(keepSessionId), tx);
    });
  }

  async sessionUser(sessionId: string): Promise<{ user: AuthUser; nonce: string } | null> {
    const row = await this.repo.findSession(sha256(sessionId), iso(this.clock.now()));
    if (!row) return null;
    const { nonce, ...user } = row;
    return { user, nonce };
  }

  async logout(sessionId: string): Promise<void> {
    await this.repo.deleteSession(sha256(sessionId));
  }

  /**
   * Application passwords are 32 random bytes, so a fast SHA-256 is as safe as a slow hash
   * and keeps Basic-authenticated automation cheap.
   */
  async createAppPassword(userId: number, name: string) {
    const password = randomHex(24);
    const id = uuid();
    await this.repo.insertAppPassword({
      uuid: id,
      user_id: userId,
      name,
      password_hash: sha256(password),
      now: iso(this.clock.now()),
    });
    return { uuid: id, name, password };
  }

  listAppPasswords(userId: number) {
    return this.repo.listAppPasswords(userId);
  }

  async deleteAppPassword(userId: number, id: string): Promise<void> {
    if (!(await this.repo.deleteAppPassword(userId, id))) throw new ApiError('not_found');
  }

  async basicUser(email: string, password: string, ip: string): Promise<AuthUser> {
    const ipBucket = `basic:ip:${sha256(ip)}`;
    const byIp = await this.rates.peek(ipBucket, LOGIN_WINDOW);
    if (byIp.count >= MAX_FAILS_PER_IP) throw tooManyAttempts(byIp.retryAfter);
    const row = await this.repo.findAppPasswordUser(
      normaliseEmail(email),
      sha256(password.replace(/\s+/g, '')),
    );
    if (!row) {
      await this.rates.hit(ipBucket, LOGIN_WINDOW);
      throw new ApiError('invalid_credentials');
    }
    void this.repo.touchAppPassword(row.app_password_id, iso(this.clock.now())).catch(() => {});
    const { app_password_id: _, ...user } = row;
    return user;
  }

  /** Whether any administrator exists (the start-up hint when none does). */
  hasAdministrator(): Promise<boolean> {
    return this.repo.hasAdministrator();
  }

  /** The user with this email (any case), for checkout's linking of orders to customers. */
  async findByEmail(email: string): Promise<AuthUser | null> {
    const row = await this.repo.findUserByEmail(normaliseEmail(email));
    return row ? toAuthUser(row) : null;
  }

  /** The administrator's user list (docs/administration.md, 'The first administrator'). */
  async listUsers(q: {
    role?: Role;
    search?: string;
    sort?: UserSort;
    order?: 'asc' | 'desc';
    page: number;
    per_page: number;
  }) {
    const by = q.sort ?? 'id';
    const { rows, total } = await this.repo.listUsers(
      { role: q.role, search: q.search },
      q.per_page,
      (q.page - 1) * q.per_page,
      { by, order: q.order ?? (by === 'id' ? 'desc' : 'asc') },
    );
    return { items: rows, total };
  }

  async requireUser(id: number): Promise<AuthUser> {
    const user = await this.getUser(id);
    if (!user) throw new ApiError('user_not_found');
    return user;
  }

  /** With `tx`, read inside the caller's transaction (licenses issued for a paid order). */
  async getUser(id: number, tx?: Tx): Promise<AuthUser | null> {
    const row = await this.repo.findUserById(id, tx);
    return row ? toAuthUser(row) : null;
  }

  /** Runs in the transaction of a forgot-password request for an existing account. */
  onPasswordResetRequested(hook: AccountHook): void {
    this.resetHooks.push(hook);
  }

  /** Runs in the transaction of a sign-in link request for an existing customer. */
  onSignInLinkRequested(hook: AccountHook): void {
    this.signInLinkHooks.push(hook);
  }

  /** Runs in the transaction that creates an account for a guest's order (createUser with `via: 'checkout'`). */
  onCreatedAtCheckout(hook: AccountHook): void {
    this.checkoutAccountHooks.push(hook);
  }

  /**
   * Forgot password (docs/email.md, 'Passwords'): the same answer whether or not the address has
   * an account. Past MAX_RESETS_PER_IP an hour from one IP it is refused (429); past
   * MAX_RESETS_PER_ACCOUNT for one address nothing more is sent, silently (no mailbox flooding).
   */
  async requestPasswordReset(email: string, ip: string): Promise<void> {
    const normalised = normaliseEmail(email);
    const byIp = await this.rates.hit(`pwreset:ip:${sha256(ip)}`, RESET_WINDOW);
    if (byIp.count > MAX_RESETS_PER_IP) {
      throw new ApiError('too_many_password_requests', { data: { retry_after: byIp.retryAfter } });
    }
    const byAccount = await this.rates.hit(`pwreset:acct:${sha256(normalised)}`, RESET_WINDOW);
    if (byAccount.count > MAX_RESETS_PER_ACCOUNT) return;
    const row = await this.repo.findUserByEmail(normalised);
    if (!row) return;
    const user = toAuthUser(row);
    await withTransaction(this.database, async (tx) => {
      for (const hook of this.resetHooks) await hook(user, tx);
    });
  }

  /**
   * A one-time sign-in link (docs/storefront.md, 'Sign-in link'): the same answer whether or not
   * the address has an account. Per client address and per email address (whether or not it has an
   * account) at most MAX_SIGN_IN_LINKS_PER_IP and MAX_SIGN_IN_LINKS_PER_EMAIL in SIGN_IN_LINK_WINDOW,
   * then 429 `too_many_sign_in_links`. Only a customer's account gets a link: an administrator
   * signs in with a password.
   */
  async requestSignInLink(email: string, ip: string): Promise<void> {
    const normalised = normaliseEmail(email);
    const byIp = await this.rates.hit(`signin:ip:${sha256(ip)}`, SIGN_IN_LINK_WINDOW);
    if (byIp.count > MAX_SIGN_IN_LINKS_PER_IP) throw tooManyLinks(byIp.retryAfter);
    const byEmail = await this.rates.hit(`signin:acct:${sha256(normalised)}`, SIGN_IN_LINK_WINDOW);
    if (byEmail.count > MAX_SIGN_IN_LINKS_PER_EMAIL) throw tooManyLinks(byEmail.retryAfter);
    const row = await this.repo.findUserByEmail(normalised);
    if (row?.role !== 'customer') return;
    const user = toAuthUser(row);
    await withTransaction(this.database, async (tx) => {
      for (const hook of this.signInLinkHooks) await hook(user, tx);
    });
  }

  /**
   * Signs in with an emailed sign-in link: the token is used once (one UPDATE only an unused,
   * unexpired token passes, whichever process), then a session starts as a sign-in's does. An
   * unknown, used or expired token is `invalid_sign_in_token`.
   */
  async claimSignInLink(token: string): Promise<{ user: AuthUser; sessionId: string; nonce: string }> {
    if (!TOKEN_PATTERN.test(token)) throw new ApiError('invalid_sign_in_token');
    const hash = sha256(token);
    const user = await withTransaction(this.database, async (tx) => {
      const used = await this.repo.consumePasswordToken(hash, ['signin'], iso(this.clock.now()), tx);
      if (!used || !safeEqual(used.token_hash, hash)) throw new ApiError('invalid_sign_in_token');
      const row = await this.repo.findUserById(used.user_id, tx);
      if (!row) throw new ApiError('invalid_sign_in_token');
      return toAuthUser(row);
    });
    return { user, ...(await this.startSession(user.id)) };
  }

  /**
   * A new single-use password token for the user (the mail worker asks when it sends the message
   * that carries it): only its SHA-256 is stored. Null when the user no longer exists.
   */
  async issuePasswordToken(userId: number, purpose: PasswordTokenPurpose): Promise<string | null> {
    const user = await this.repo.findUserById(userId);
    if (!user) return null;
    const token = randomHex(32);
    const now = this.clock.now();
    await this.repo.insertPasswordToken({
      token_hash: sha256(token),
      user_id: userId,
      purpose,
      expires_at: iso(new Date(now.getTime() + PASSWORD_TOKEN_SECONDS[purpose] * 1000)),
      now: iso(now),
    });
    return token;
  }

  /** What a live token is for (the page's heading), or null for an unknown, used or expired one. */
  async passwordTokenPurpose(token: string): Promise<'reset' | 'welcome' | null> {
    if (!TOKEN_PATTERN.test(token)) return null;
    const hash = sha256(token);
    const row = await this.repo.findLivePasswordToken(hash, PASSWORD_PURPOSES, iso(this.clock.now()));
    return row && safeEqual(row.token_hash, hash) ? (row.purpose as 'reset' | 'welcome') : null;
  }

  /**
   * Sets the password with an emailed token: the token is used (once, whichever process), every
   * other link of the user is retired and every session ends, in one transaction. An unknown,
   * used or expired token is `invalid_password_token`.
   */
  async resetPassword(token: string, password: string): Promise<AuthUser> {
    if (!TOKEN_PATTERN.test(token)) throw new ApiError('invalid_password_token');
    if (password.length < 8 || password.length > 1024) throw new ApiError('invalid_password');
    const hash = sha256(token);
    // Only a live token earns the slow hash (anyone may call this route), computed outside the
    // transaction (SQLite has one writer); the transaction then uses the token once.
    if (!(await this.repo.findLivePasswordToken(hash, PASSWORD_PURPOSES, iso(this.clock.now())))) {
      throw new ApiError('invalid_password_token');
    }
    const password_hash = await hashPassword(password);
    return withTransaction(this.database, async (tx) => {
      const now = iso(this.clock.now());
      const used = await this.repo.consumePasswordToken(hash, PASSWORD_PURPOSES, now, tx);
      if (!used || !safeEqual(used.token_hash, hash)) throw new ApiError('invalid_password_token');
      const row = await this.repo.findUserById(used.user_id, tx);
      if (!row) throw new ApiError('invalid_password_token');
      await this.repo.updateUser(row.id, { password_hash, now }, tx);
      await this.repo.retirePasswordTokens(row.id, now, tx);
      await this.repo.deleteUserSessions(row.id, tx);
      return toAuthUser(row);
    });
  }
}

const tooManyLinks = (retryAfter: number) =>
  new ApiError('too_many_sign_in_links', { data: { retry_after: retryAfter } });

const tooManyAttempts = (retryAfter: number) =>
  new ApiError('too_many_login_attempts', { data: { retry_after: retryAfter } });

function toAuthUser(row: UserRow): AuthUser {
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    first_name: row.first_name,
    last_name: row.last_name,
  };
}
