import { useQueryClient } from '@tanstack/react-query';
import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useState } from 'react';
import { ApiError, ok, onSessionLost, api as server, setNonce } from './api';
import type { Session, User } from './resources';

export type SessionState =
  | { status: 'loading' }
  | { status: 'failed'; error: unknown }
  | { status: 'signed-out'; notice?: string; customer?: User }
  | { status: 'signed-in'; user: User };

interface SessionApi {
  state: SessionState;
  /** After a successful POST /v1/auth/login. */
  signedIn(session: Session): void;
  signOut(): Promise<void>;
  retry(): void;
}

const Context = createContext<SessionApi | null>(null);

export function useSession(): SessionApi {
  const api = useContext(Context);
  if (!api) throw new Error('useSession outside SessionProvider');
  return api;
}

/**
 * Who is signed in, from GET /v1/auth/me (the session cookie) at start. A customer's session (the
 * customer pages share the cookie) is not an administrator's: the sign-in form is shown, saying so.
 */
export function SessionProvider({ children }: { children: ReactNode }) {
  const client = useQueryClient();
  const [state, setState] = useState<SessionState>({ status: 'loading' });
  const [attempt, setAttempt] = useState(0);

  const accept = useCallback((session: Session) => {
    setNonce(session.nonce);
    if (session.user.role === 'administrator') setState({ status: 'signed-in', user: session.user });
    else setState({ status: 'signed-out', customer: session.user });
  }, []);

  // biome-ignore lint/correctness/useExhaustiveDependencies: `attempt` is how retry() asks again
  useEffect(() => {
    let live = true;
    ok(server.GET('/v1/auth/me')).then(
      (session) => live && accept(session),
      (error) => {
        if (!live) return;
        if (error instanceof ApiError && error.status === 401) setState({ status: 'signed-out' });
        else setState({ status: 'failed', error });
      },
    );
    return () => {
      live = false;
    };
  }, [accept, attempt]);

  useEffect(() => {
    onSessionLost(() => {
      setNonce('');
      client.clear();
      setState({ status: 'signed-out', notice: 'Your session has ended. Sign in again to continue.' });
    });
  }, [client]);

  const api = useMemo<SessionApi>(
    () => ({
      state,
      signedIn: accept,
      async signOut() {
        try {
          await ok(server.POST('/v1/auth/logout'));
        } catch (e) {
          // Already signed out on the server: the result is the same.
          if (!(e instanceof ApiError && e.status === 401)) throw e;
        }
        setNonce('');
        client.clear();
        setState({ status: 'signed-out', notice: 'You have signed out.' });
      },
      retry: () => {
        setState({ status: 'loading' });
        setAttempt((n) => n + 1);
      },
    }),
    [state, accept, client],
  );
  return <Context.Provider value={api}>{children}</Context.Provider>;
}
