/**
 * The records the console's screens share, as the API answers them: each is the answer type of
 * a route in the OpenAPI document (sdk/js/src/openapi.d.ts), so a changed route schema shows up
 * here, and in every screen that reads a field it no longer has, as a type error.
 */
import type { Answer } from './api';

type Item<T> = T extends readonly (infer I)[] ? I : never;

export type Session = Answer<'/v1/auth/me'>;
export type User = Answer<'/v1/users/{id}'>;
export type License = Answer<'/v1/licenses/{id}'>;
export type Activation = Item<License['activations']>;
export type LicenseList = Answer<'/v1/licenses'>;
export type LicenseListItem = Item<LicenseList['licenses']>;
export type Product = Answer<'/v1/products/{id}'>;
export type Variation = Item<Product['variations']>;
export type SoftwareConfig = Answer<'/v1/software/products/{product_id}/config', 'post'>;
export type Versions = Answer<'/v1/software/products/{product_id}/versions'>;
export type Release = Item<Versions['releases']>;
export type Channel = Release['channel'];
export type AppPassword = Item<Answer<'/v1/users/me/application-passwords'>>;
export type Order = Answer<'/v1/orders/{id}'>;
export type OrderItem = Item<Order['items']>;
export type RefundList = Answer<'/v1/orders/{id}/refunds'>;
export type OrderRefund = Item<RefundList['refunds']>;
export type OrderNote = Item<Answer<'/v1/orders/{id}/notes'>['notes']>;
export type OrderInvoice = Item<Answer<'/v1/orders/{id}/invoices'>>;
export type MailMessage = Item<Answer<'/v1/mail/messages'>>;
export type WebhookAttempt = Item<Answer<'/v1/webhooks/attempts'>>;
export type Settings = Answer<'/v1/settings'>;
export type Currency = Item<Settings['currencies']>;
export type Coupon = Answer<'/v1/coupons/{id}'>;
export type TaxRate = Item<Answer<'/v1/tax-rates'>>;
export type ShippingZone = Item<Answer<'/v1/shipping-zones'>>;
export type Gateway = Item<Answer<'/v1/payment-gateways'>>;
export type AuditEvent = Item<Answer<'/v1/audit-events'>>;
export type Subscription = Answer<'/v1/subscriptions/{id}'>;
export type SubscriptionListItem = Item<Answer<'/v1/subscriptions'>>;
