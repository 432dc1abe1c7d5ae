/**
 * A checkout answer that is not a REST error: checkout has its own JSON bodies. The
 * route sends `body` with `status` (docs/checkout.md lists every status and why).
 */
export class CheckoutFailure extends Error {
  constructor(
    readonly status: number,
    readonly body: { error: string; [field: string]: unknown },
  ) {
    super(body.error);
  }
}

export const fail = (status: number, error: string, extra: Record<string, unknown> = {}) =>
  new CheckoutFailure(status, { error, ...extra });
