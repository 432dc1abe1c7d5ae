/**
 * What the console shows instead of the API's names: statuses (the same words the buyer reads on
 * the store's pages, from one shared file), the fields an audit entry lists, and its actions.
 */
export {
  ORDER_STATUS_LABELS,
  orderStatusLabel,
  SUBSCRIPTION_STATUS_LABELS,
  subscriptionStatusLabel,
} from '../../src/pages/status-labels.js';

/** `activation_limit` → "Activation limit": a name no list below knows yet, still readable. */
export function humanise(name: string): string {
  const words = name
    .replace(/_minor$/, '')
    .replace(/[_-]+/g, ' ')
    .trim();
  return words ? words.charAt(0).toUpperCase() + words.slice(1) : name;
}

/** The fields audit entries record (the columns of the changed rows), in the console's own words. */
const FIELDS: Record<string, string> = {
  name: 'Name',
  title: 'Title',
  slug: 'Address (slug)',
  status: 'Status',
  type: 'Type',
  price_minor: 'Price (in cents)',
  price: 'Price',
  virtual: 'Virtual (no shipping)',
  stock_quantity: 'Stock',
  licensing_enabled: 'Licensing',
  activation_limit: 'Activation limit',
  activation_mode: 'Activation mode',
  subscription_period: 'Billing period',
  subscription_interval: 'Billing interval',
  entitlement_policy: 'Entitlements',
  filename_template: 'Download file name',
  storage_driver: 'File storage',
  software_enabled: 'Software updates',
  short_description: 'Short description',
  description: 'Description',
  image: 'Image',
  icon: 'Icon',
  banner: 'Banner',
  software_icon: 'Icon',
  software_banner: 'Banner',
  variations: 'Variations',
  attributes: 'Options',
  code: 'Code',
  discount_type: 'Discount type',
  amount: 'Amount',
  expires_at: 'Expires',
  usage_expires_at: 'Expires',
  usage_limit: 'Usage limit',
  usage_limit_per_user: 'Usage limit per customer',
  minimum_amount: 'Minimum spend',
  maximum_amount: 'Maximum spend',
  individual_use: 'Individual use only',
  product_ids: 'Products',
  excluded_product_ids: 'Excluded products',
  product_id: 'Product',
  currency: 'Currency',
  free_shipping: 'Free shipping',
  country: 'Country',
  state: 'State',
  postcode: 'Postcode',
  rate: 'Rate',
  shipping: 'Applies to shipping',
  compound: 'Compound',
  priority: 'Priority',
  regions: 'Regions',
  methods: 'Shipping methods',
  enabled: 'Enabled',
  instructions: 'Payment instructions',
  license_key: 'License key',
  customer_id: 'Customer',
  user_id: 'Customer',
  order_id: 'Order',
  email: 'Email',
  note: 'Note',
  notes: 'Notes',
  reason: 'Reason',
  version: 'Version',
  channel: 'Channel',
  changelog: 'Changelog',
  rollout_percent: 'Rollout',
  is_current: 'Current release',
  role: 'Role',
  refunded_total: 'Refunded',
  restock: 'Restocked',
};

export const fieldLabel = (field: string) => FIELDS[field] ?? humanise(field);

/** What an audit entry did, in words. */
const ACTIONS: Record<string, string> = {
  create: 'Created',
  update: 'Changed',
  delete: 'Deleted',
  status: 'Status changed',
  revoke: 'Revoked',
  refund: 'Refunded',
  note: 'Note added',
  protect: 'Protected',
  rotate: 'Key rotated',
  rotate_key: 'Key rotated',
  resend: 'Sent again',
  redeliver: 'Delivered again',
  update_software: 'Software settings changed',
  deactivate_activation: 'Site deactivated',
  take_over_activation: 'Site taken over',
  remove_public_source: 'Public source removed',
  move_storage: 'Storage moved',
};

export const actionLabel = (action: string) => ACTIONS[action] ?? humanise(action);
