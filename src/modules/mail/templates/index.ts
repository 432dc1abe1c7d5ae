import { accountCreated } from './account-created.js';
import type { MessageData, MessageKind } from './facts.js';
import type { MailContext, Rendered, Template } from './layout.js';
import { licenseExpired } from './license-expired.js';
import { licenseExpiring } from './license-expiring.js';
import { licenseTransfer } from './license-transfer.js';
import { orderOnHold } from './order-on-hold.js';
import { orderReceipt } from './order-receipt.js';
import { passwordReset } from './password-reset.js';
import { paymentReceived } from './payment-received.js';
import { renewalDue } from './renewal-due.js';
import { renewalFailed } from './renewal-failed.js';
import { renewalPaid } from './renewal-paid.js';
import { renewalReminder } from './renewal-reminder.js';
import { signInLink } from './sign-in-link.js';
import { subscriptionStatus } from './subscription-status.js';

const TEMPLATES: { [K in MessageKind]: Template<MessageData[K]> } = {
  order_receipt: orderReceipt,
  order_on_hold: orderOnHold,
  payment_received: paymentReceived,
  renewal_due: renewalDue,
  renewal_paid: renewalPaid,
  renewal_failed: renewalFailed,
  subscription_status: subscriptionStatus,
  license_expiring: licenseExpiring,
  license_expired: licenseExpired,
  renewal_reminder: renewalReminder,
  password_reset: passwordReset,
  account_created: accountCreated,
  sign_in_link: signInLink,
  license_transfer: licenseTransfer,
};

export function render<K extends MessageKind>(kind: K, data: MessageData[K], ctx: MailContext): Rendered {
  return (TEMPLATES[kind] as Template<MessageData[K]>)(data, ctx);
}
