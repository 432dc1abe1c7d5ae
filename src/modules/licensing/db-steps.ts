import type { TransactionSteps } from '../../db/transaction.js';
import { ApiError, type ErrorCode } from '../../http/errors.js';

/**
 * Runs one database step and names its failure with its documented code (`activation_read_failed`,
 * …: docs/licensing.md, '6. Error codes'). A domain error thrown inside passes through unchanged.
 * The cause kept for the log carries only the driver's name, code and message: PostgreSQL puts row
 * values (a license key) in `detail`.
 */
export async function step<T>(code: ErrorCode, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof ApiError) throw e;
    const failure = new ApiError(code);
    const driverCode = (e as { code?: unknown } | null)?.code;
    const message = e instanceof Error ? e.message : String(e);
    const cause = new Error(typeof driverCode === 'string' ? `${message} (code ${driverCode})` : message);
    cause.name = e instanceof Error ? e.name : 'Error';
    failure.cause = cause;
    throw failure;
  }
}

/**
 * A transaction's own begin and commit, named with their documented codes: the `{ begin, commit }`
 * of `withTransaction` (docs/development.md, 'Transactions').
 */
export const transactionSteps = (begin: ErrorCode, commit: ErrorCode): TransactionSteps => ({
  begin: (run) => step(begin, run),
  commit: (run) => step(commit, run),
});
