/** The gateway that takes no money: only a store in test mode offers it (docs/payments.md, 'Test mode and live mode'). */
export const TEST_GATEWAY = 'test_card';
/** Gateways whose payment the store receives itself; enabling one needs its payment instructions. */
export const OFFLINE_GATEWAYS: ReadonlySet<string> = new Set(['bacs', 'cheque']);
