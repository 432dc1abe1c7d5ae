import type { Kysely } from 'kysely';
import type { Dialect } from '../database.js';
import * as m2026112201 from './2026112201_foundation.js';
import * as m2026112202 from './2026112202_webhook_outbox.js';
import * as m2026112204 from './2026112204_licensing.js';
import * as m2026112206 from './2026112206_releases.js';
import * as m2026112207 from './2026112207_cart.js';
import * as m2026112208 from './2026112208_oauth.js';
import * as m2026112209 from './2026112209_orders.js';
import * as m2026112210 from './2026112210_distribution.js';
import * as m2026112211 from './2026112211_token_indexes.js';
import * as m2026112212 from './2026112212_release_changes.js';
import * as m2026112401 from './2026112401_list_indexes.js';
import * as m2026112420 from './2026112420_audit_events.js';
import * as m2026112421 from './2026112421_license_search.js';
import * as m2026112440 from './2026112440_reports.js';
import * as m2026112441 from './2026112441_customer_lists.js';
import * as m2026112442 from './2026112442_orders_total.js';
import * as m2026112450 from './2026112450_mail.js';
import * as m2026112451 from './2026112451_storefront.js';
import * as m2026112470 from './2026112470_account_download_tokens.js';
import * as m2026112471 from './2026112471_gateway_instructions.js';
import * as m2026112480 from './2026112480_signing_keys.js';
import * as m2026112481 from './2026112481_activation_environment.js';
import * as m2026112590 from './2026112590_release_signatures.js';
import * as m2026112591 from './2026112591_release_metadata.js';
import * as m2026112592 from './2026112592_audit_actor_kind.js';
import * as m2026112593 from './2026112593_software_images.js';
import * as m2026112594 from './2026112594_release_channels.js';
import * as m2026112595 from './2026112595_field_reports.js';
import * as m2026112596 from './2026112596_activation_last_seen.js';
import * as m2026112597 from './2026112597_refunds_and_order_notes.js';
import * as m2026112800 from './2026112800_stripe.js';
import * as m2026112801 from './2026112801_stripe_renewal_charges.js';
import * as m2026112810 from './2026112810_artifact_stored_etag.js';
import * as m2026112863 from './2026112863_store_mode.js';
import * as m2026112871 from './2026112871_buyers_password_set.js';
import * as m2026112879 from './2026112879_stripe_cards.js';
import * as m2026112885 from './2026112885_invoices.js';
import * as m2026112891 from './2026112891_trials.js';
import * as m2026112895 from './2026112895_legacy_api.js';
import * as m2026112940 from './2026112940_import_map.js';
import * as m2026113001 from './2026113001_license_transfers.js';
import * as m2026113010 from './2026113010_upgrades.js';
import * as m2026113020 from './2026113020_renewal_links.js';
import * as m2026113030 from './2026113030_order_tax.js';
import * as m2026113060 from './2026113060_subscription_gateway_profile.js';
import * as m2026113070 from './2026113070_import_jobs.js';
import * as m2026113090 from './2026113090_subscription_gateway_ended.js';
import * as m2026113100 from './2026113100_token_locators.js';

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen and typed against no application schema
export type MigrationModule = { up(db: Kysely<any>, dialect: Dialect): Promise<void> };

/** Every migration, in order. Names are timestamps; a released migration is never edited. */
export const migrations: Record<string, MigrationModule> = {
  '2026112201_foundation': m2026112201,
  '2026112202_webhook_outbox': m2026112202,
  '2026112204_licensing': m2026112204,
  '2026112206_releases': m2026112206,
  '2026112207_cart': m2026112207,
  '2026112208_oauth': m2026112208,
  '2026112209_orders': m2026112209,
  '2026112210_distribution': m2026112210,
  '2026112211_token_indexes': m2026112211,
  '2026112212_release_changes': m2026112212,
  '2026112401_list_indexes': m2026112401,
  '2026112420_audit_events': m2026112420,
  '2026112421_license_search': m2026112421,
  '2026112440_reports': m2026112440,
  '2026112441_customer_lists': m2026112441,
  '2026112442_orders_total': m2026112442,
  '2026112450_mail': m2026112450,
  '2026112451_storefront': m2026112451,
  '2026112470_account_download_tokens': m2026112470,
  '2026112471_gateway_instructions': m2026112471,
  '2026112480_signing_keys': m2026112480,
  '2026112481_activation_environment': m2026112481,
  '2026112590_release_signatures': m2026112590,
  '2026112591_release_metadata': m2026112591,
  '2026112592_audit_actor_kind': m2026112592,
  '2026112593_software_images': m2026112593,
  '2026112594_release_channels': m2026112594,
  '2026112595_field_reports': m2026112595,
  '2026112596_activation_last_seen': m2026112596,
  '2026112597_refunds_and_order_notes': m2026112597,
  '2026112800_stripe': m2026112800,
  '2026112801_stripe_renewal_charges': m2026112801,
  '2026112810_artifact_stored_etag': m2026112810,
  '2026112863_store_mode': m2026112863,
  '2026112871_buyers_password_set': m2026112871,
  '2026112879_stripe_cards': m2026112879,
  '2026112885_invoices': m2026112885,
  '2026112891_trials': m2026112891,
  '2026112895_legacy_api': m2026112895,
  '2026112940_import_map': m2026112940,
  '2026113001_license_transfers': m2026113001,
  '2026113020_renewal_links': m2026113020,
  '2026113030_order_tax': m2026113030,
  '2026113010_upgrades': m2026113010,
  '2026113060_subscription_gateway_profile': m2026113060,
  '2026113070_import_jobs': m2026113070,
  '2026113090_subscription_gateway_ended': m2026113090,
  '2026113100_token_locators': m2026113100,
};
