/**
 * The words for order and subscription statuses, the same for the store owner (the console,
 * console) and the buyer (the store's and the account's pages): one file both import, so an order
 * the buyer sees as "Paid" is "Paid" in the console too (docs/admin.md). It imports nothing, as the
 * console's build (Vite, scripts/build-admin.ts) bundles it too.
 */
export const ORDER_STATUS_LABELS: Readonly<Record<string, string>> = {
  pending: 'Waiting for payment',
  processing: 'Paid',
  'on-hold': 'On hold',
  completed: 'Completed',
  failed: 'Payment failed',
  cancelled: 'Cancelled',
  refunded: 'Refunded',
};

export const SUBSCRIPTION_STATUS_LABELS: Readonly<Record<string, string>> = {
  pending: 'Waiting for the first payment',
  active: 'Active',
  'on-hold': 'On hold',
  'pending-cancel': 'Cancelled: ends at the end of the paid period',
  cancelled: 'Cancelled',
  expired: 'Expired',
};

/** A status's word; a status this file does not know yet is shown as it is. */
export const orderStatusLabel = (status: string) => ORDER_STATUS_LABELS[status] ?? status;
export const subscriptionStatusLabel = (status: string) => SUBSCRIPTION_STATUS_LABELS[status] ?? status;
