import { useEffect, useState } from 'react';
import { useForm } from 'react-hook-form';
import { ApiError, api, ok } from '../api';
import { useSession } from '../session';
import { TextField } from '../ui/form';

interface Form {
  email: string;
  password: string;
}

const minutes = (seconds: number) => {
  const m = Math.ceil(seconds / 60);
  return m <= 1 ? 'a minute' : `${m} minutes`;
};

/** The sign-in refusals in words, by code (docs/api.md, 'Sign-in throttling'). */
export function signInProblem(error: unknown): { code: string; text: string } {
  if (!(error instanceof ApiError))
    return { code: 'client_error', text: 'Something went wrong in the console.' };
  const retry = Number(error.data.retry_after ?? 0);
  switch (error.code) {
    case 'invalid_credentials':
      return { code: error.code, text: 'The email or password is incorrect.' };
    case 'too_many_login_attempts':
      return {
        code: error.code,
        text:
          `Sign-in is locked for now: too many failed attempts for this account or from this address. ` +
          `Try again in ${minutes(retry)}${retry ? ` (at ${new Date(Date.now() + retry * 1000).toLocaleTimeString()})` : ''}. ` +
          'Even the right password is refused until then.',
      };
    case 'server_busy':
      return {
        code: error.code,
        text: `The server is busy checking other sign-ins. Try again in ${retry || 'a few'} seconds.`,
      };
    default:
      return { code: error.code, text: error.message };
  }
}

export function SignIn() {
  const session = useSession();
  const state = session.state;
  const [problem, setProblem] = useState<{ code: string; text: string } | null>(null);
  const {
    register,
    handleSubmit,
    setFocus,
    formState: { errors, isSubmitting },
  } = useForm<Form>({ defaultValues: { email: '', password: '' } });

  useEffect(() => {
    document.title = 'Sign in · Tollgate';
    setFocus('email');
  }, [setFocus]);

  const onSubmit = async (form: Form) => {
    setProblem(null);
    try {
      const body = await ok(api.POST('/v1/auth/login', { body: form }));
      if (body.user.role !== 'administrator') {
        // A customer account: end the session it just opened, and say why.
        await ok(api.POST('/v1/auth/logout')).catch(() => {});
        setProblem({
          code: 'not_administrator',
          text: 'This is a customer account. The console is for the store’s administrators.',
        });
        return;
      }
      session.signedIn(body);
    } catch (e) {
      setProblem(signInProblem(e));
    }
  };

  const notice = state.status === 'signed-out' ? state.notice : undefined;
  const customer = state.status === 'signed-out' ? state.customer : undefined;
  return (
    <main id="main" className="sign-in">
      <form onSubmit={handleSubmit(onSubmit)} noValidate aria-labelledby="sign-in-title" className="card">
        <h1 id="sign-in-title">Tollgate console</h1>
        <p className="lead">Sign in with your administrator account.</p>
        {notice ? (
          <p className="note ok" role="status">
            {notice}
          </p>
        ) : null}
        {customer ? (
          <p className="note" role="status">
            You are signed in as {customer.email}, a customer account. Sign in as an administrator to use the
            console.
          </p>
        ) : null}
        {problem ? (
          <div className="note error" role="alert" data-code={problem.code}>
            {problem.text}
          </div>
        ) : null}
        <TextField
          label="Email"
          id="email"
          error={errors.email}
          type="email"
          autoComplete="username"
          {...register('email', { required: 'Enter your email address.' })}
        />
        <TextField
          label="Password"
          id="password"
          error={errors.password}
          type="password"
          autoComplete="current-password"
          {...register('password', { required: 'Enter your password.' })}
        />
        <button type="submit" className="primary wide" disabled={isSubmitting}>
          {isSubmitting ? 'Signing in…' : 'Sign in'}
        </button>
        <p className="hint">
          The first administrator is the one named by <code>ADMIN_EMAIL</code> and <code>ADMIN_PASSWORD</code>{' '}
          when the store was started, or created with <code>npm run user:create</code>.
        </p>
      </form>
    </main>
  );
}
