/** The shapes of the /v1 answers the console reads (the OpenAPI document at /v1/openapi.json has them all). */

export interface User {
  id: number;
  email: string;
  role: 'administrator' | 'customer';
  first_name: string;
  last_name: string;
}

export interface Session {
  user: User;
  nonce: string;
}

export interface Activation {
  id: number;
  license_id: number;
  domain: string;
  domain_normalized: string;
  installation_id: string;
  ip_address: string;
  user_agent: string;
  status: string;
  activated_at: string;
  deactivated_at: string | null;
}

export interface License {
  id: number;
  license_key: string;
  product_id: number;
  variation_id: number;
  product_name: string;
  variation_name: string;
  order_id: number;
  user_id: number;
  user_email: string;
  user_name: string;
  subscription_id: number | null;
  status: string;
  activation_limit: number;
  activation_count: number;
  activations_remaining: number;
  expires_at: string | null;
  usage_expires_at_utc: string;
  is_expired: boolean;
  entitlements: {
    license_active: boolean;
    update_entitled: boolean;
    updates_expires_at: string | null;
    support_expires_at: string | null;
    policy_mode: string;
  };
  created_at: string;
  updated_at: string;
}

export interface LicenseWithActivations extends License {
  activations: Activation[];
}

export interface LicenseList {
  licenses: License[];
  total: number;
  page: number;
  per_page: number;
}

export interface PolicyPart {
  mode: string;
  days?: number;
}

export interface Policy {
  usage: PolicyPart;
  updates: PolicyPart;
  support: PolicyPart;
  historical_downloads: boolean;
}

export interface Variation {
  id: number;
  product_id: number;
  name: string;
  price: string;
  activation_limit: number | null;
}

export interface Product {
  id: number;
  name: string;
  status: string;
  type: string;
  price: string;
  virtual: boolean;
  activation_limit: number | null;
  activation_mode: string | null;
  subscription: { period: string; interval: number } | null;
  entitlement_policy: Policy | null;
  variations: Variation[];
  slug: string | null;
  filename_template: string;
  storage_driver: string;
  licensing_enabled: string | null;
  software_enabled: string;
  created_at: string;
  updated_at: string;
}

export interface SoftwareConfig {
  product_id: number;
  slug: string | null;
  filename_template: string;
  storage_driver: string;
  licensing_enabled: string | null;
  software_enabled: string;
}

export interface Release {
  version_id: number;
  product_id: number;
  version: string;
  status: 'draft' | 'published' | 'withdrawn';
  is_current: boolean;
  published_at: string | null;
  release_date: string;
  withdrawn_at: string | null;
  download_count: number;
  file_name: string;
  file_size: number | null;
  file_sha256: string;
  storage_driver: string;
  external_url: string | null;
}

export interface Versions {
  product_id: number;
  automatic_storage_driver: string | null;
  releases: Release[];
}

export interface AppPassword {
  uuid: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
}
