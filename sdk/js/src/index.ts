// @tollgate/client: the store's typed routes and the helpers of an app's licensing and updater
// (docs/sdk-js.md).
export {
  type ActivateAnswer,
  type ChangelogAnswer,
  type Channel,
  type CheckAnswer,
  type CheckInput,
  type DeactivateAnswer,
  type GraceResult,
  type License,
  type PackageAnswer,
  type PackageInput,
  type Platform,
  Tollgate,
  type TollgateOptions,
  type ValidAnswer,
} from './client.js';
export type { DownloadablePackage, DownloadOptions, VerifiedDownload } from './download.js';
export { CLIENT_CODES, type ClientCode, TollgateError } from './errors.js';
export type { components, paths } from './openapi.js';
export {
  normaliseDomain,
  publicKeyOf,
  type Receipt,
  type ReceiptClaims,
  type SigningKey,
  type VerifyReceiptOptions,
  verifyPackageSignature,
  verifyReceipt,
} from './signatures.js';
export { FileReceiptStorage, type ReceiptStorage, type StoredReceipt } from './storage.js';
export {
  type VerifyWebhookOptions,
  verifyWebhook,
  type WebhookEnvelope,
  type WebhookHeaders,
} from './webhooks.js';
