import type { FastifyReply, FastifyRequest } from 'fastify';
import { SESSION_COOKIE } from '../http/auth.js';
import { ApiError } from '../http/errors.js';
import { type AccountsService, type AuthUser, SESSION_DAYS } from '../modules/accounts/accounts.service.js';
import { randomHex, safeEqual } from '../random.js';
import type { Viewer } from './layout.js';

export type FormBody = Record<string, string>;

/** The posted fields; only text values count (a JSON body aimed at a page gets no further than a form would). */
export function formOf(request: FastifyRequest): FormBody {
  const body = request.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return {};
  return Object.fromEntries(Object.entries(body).filter(([, v]) => typeof v === 'string')) as FormBody;
}

/** The GET viewer: the session's user and its nonce (for the forms the page renders). */
export function viewerOf(request: FastifyRequest): (Viewer & { user: AuthUser }) | null {
  if (!request.user || !request.sessionNonce) return null;
  return { user: request.user, email: request.user.email, nonce: request.sessionNonce };
}

/**
 * A page form authenticates with the session cookie plus the session nonce as the hidden field
 * `_nonce` (the form counterpart of X-REST-Nonce): no session means signed out, a missing or
 * wrong nonce is a cross-site or stale form and is refused (403).
 */
export async function formUser(request: FastifyRequest, accounts: AccountsService): Promise<AuthUser | null> {
  if (!request.sessionId || !request.sessionNonce) return null;
  const sent = formOf(request)._nonce;
  if (typeof sent !== 'string' || !safeEqual(sent, request.sessionNonce)) {
    throw new ApiError('rest_cookie_invalid_nonce');
  }
  return (await accounts.sessionUser(request.sessionId))?.user ?? null;
}

/**
 * Before sign-in there is no session nonce, so the forms of the signed-out pages (sign in, forgot
 * and reset password) use a double-submit token instead: a random value in a SameSite=Strict
 * cookie that the form repeats as `_csrf` (login CSRF).
 */
const FORM_COOKIE = 'tollgate_form';

/** What the signed-out pages (sign in, sign-in link, forgot and reset password) are given. */
export interface SignedOutPagesOptions {
  accounts: AccountsService;
  /** Whether the store can email a buyer now: without it no page promises an email. */
  mailAvailable: () => Promise<boolean>;
  secureCookies: boolean;
}

export function signedOutForm(secureCookies: boolean) {
  return {
    /** The token for the form's hidden `_csrf` field; sets the cookie when the browser has none. */
    token(request: FastifyRequest, reply: FastifyReply): string {
      const existing = request.cookies[FORM_COOKIE];
      if (existing && /^[0-9a-f]{32}$/.test(existing)) return existing;
      const token = randomHex(16);
      reply.setCookie(FORM_COOKIE, token, {
        path: '/account',
        httpOnly: true,
        sameSite: 'strict',
        secure: secureCookies,
      });
      return token;
    },
    /** The posted `_csrf` repeats the cookie. */
    ok(request: FastifyRequest): boolean {
      const expected = request.cookies[FORM_COOKIE];
      const sent = formOf(request)._csrf;
      return Boolean(expected && sent && safeEqual(sent, expected));
    },
  };
}

/** Where sign-in may send the customer afterwards: only a path of these pages, never another site. */
export function safeNext(next: unknown): string {
  const fallback = '/account/licenses';
  if (typeof next !== 'string' || !next.startsWith('/account/') || next.length > 8192) return fallback;
  try {
    const url = new URL(next, 'http://local.invalid');
    if (url.origin !== 'http://local.invalid' || !url.pathname.startsWith('/account/')) return fallback;
    return url.pathname + url.search;
  } catch {
    return fallback;
  }
}

/**
 * What a page says for its `?notice=` or `?error=` after a redirect: one of the page's own
 * messages, by key, so a link cannot put words of its own on the page.
 */
export function messageOf(
  request: FastifyRequest,
  param: 'notice' | 'error',
  messages: Record<string, string>,
): string | undefined {
  const key = (request.query as Record<string, unknown>)[param];
  return typeof key === 'string' ? messages[key] : undefined;
}

export const signInUrl = (next: string) => `/account/sign-in?${new URLSearchParams({ next })}`;

/** Signs the browser in: the session's cookie, as every sign-in page sets it. */
export function setSessionCookie(reply: FastifyReply, sessionId: string, secureCookies: boolean): void {
  reply.setCookie(SESSION_COOKIE, sessionId, {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: secureCookies,
    maxAge: SESSION_DAYS * 86400,
  });
}
