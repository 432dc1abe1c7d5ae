import type { Generated } from 'kysely';
import type { Id } from '../../db/schema.js';

export interface CatalogueTables {
  products: {
    id: Id;
    name: string;
    status: string;
    type: string;
    price_minor: number;
    virtual: number;
    stock_quantity: number | null;
    licensing_enabled: string | null;
    activation_limit: number | null;
    activation_mode: string | null;
    subscription_period: string | null;
    subscription_interval: number | null;
    /** JSON text of the entitlement policy, or null. */
    entitlement_policy: string | null;
    slug: string | null;
    filename_template: string | null;
    storage_driver: string | null;
    software_enabled: string | null;
    short_description: string | null;
    description: string | null;
    /** The image's content hash (media rows <hash>-<width>.webp), or null. */
    image: string | null;
    /** WordPress's icon and banner: content hashes of media rows (migration 2026112593), or null. */
    software_icon: string | null;
    software_banner: string | null;
    /** The trial a product offers (docs/selling.md, 'Trials'): days (null = none) and sites. */
    trial_days: number | null;
    trial_sites: number | null;
    /** 1 when the legacy updater API answers for the product (migration 2026112895). */
    legacy_api: Generated<number>;
    /** JSON list of product ids a license may upgrade to (migration 2026113010), or null for none. */
    upgrade_paths: string | null;
    created_at: string;
    updated_at: string;
  };
  product_variations: {
    id: Id;
    product_id: number;
    name: string;
    price_minor: number;
    /** JSON object of attribute name to value. */
    attributes: string;
    activation_limit: number | null;
    stock_quantity: number | null;
    entitlement_policy: string | null;
    position: number;
    created_at: string;
    updated_at: string;
  };
  coupons: {
    id: Id;
    code: string;
    discount_type: string;
    amount: string;
    expires_at: string | null;
    usage_limit: number | null;
    usage_limit_per_user: number | null;
    usage_count: Generated<number>;
    minimum_amount: string | null;
    maximum_amount: string | null;
    individual_use: number;
    product_ids: string;
    excluded_product_ids: string;
    currency: string | null;
    free_shipping: number;
    created_at: string;
  };
  tax_rates: {
    id: Id;
    country: string;
    state: string;
    postcode: string;
    rate: string;
    name: string;
    shipping: number;
    compound: number;
    priority: number;
  };
  shipping_zones: { id: Id; name: string; regions: string; methods: string };
  payment_gateways: {
    id: string;
    title: string;
    enabled: number;
    currencies: string;
    position: number;
    /** Shown to the customer while an order paid with this gateway waits for payment ('' = none). */
    instructions: string;
  };
}
