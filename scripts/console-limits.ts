// The limits of the console's inputs (maxlength, min, max), read from the API routes' own TypeBox
// schemas when the console is built: console/vite.config.ts serves them to the console as the
// module `virtual:limits` (console/src/limits.ts), and scripts/build-admin.ts counts them in the
// build's source hash, so a changed limit in a schema rebuilds the console.
import { ProductCreateBody, SoftwareConfigBody } from '../src/modules/catalogue/catalogue.schemas.js';
import { CouponCreateBody } from '../src/modules/catalogue/coupons.schemas.js';
import { ShippingZoneBody } from '../src/modules/catalogue/shipping.schemas.js';
import { TaxRateBody } from '../src/modules/catalogue/tax.schemas.js';
import { ListQuery as LicenseListQuery } from '../src/modules/licensing/license.schemas.js';
import { Settings } from '../src/modules/settings/settings.schemas.js';

export interface FieldLimits {
  maxLength?: number;
  minimum?: number;
  maximum?: number;
}

interface SchemaNode {
  type?: unknown;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  anyOf?: SchemaNode[];
  properties?: Record<string, SchemaNode>;
}

/** A field's limits; of a union (a nullable field), those of its first member that has any. */
function fieldLimits(node: SchemaNode): FieldLimits {
  if (node.anyOf) {
    for (const member of node.anyOf) {
      const found = fieldLimits(member);
      if (Object.keys(found).length > 0) return found;
    }
    return {};
  }
  const out: FieldLimits = {};
  if (typeof node.maxLength === 'number') out.maxLength = node.maxLength;
  if (typeof node.minimum === 'number') out.minimum = node.minimum;
  if (typeof node.maximum === 'number') out.maximum = node.maximum;
  return out;
}

function limitsOf(schema: unknown): Record<string, FieldLimits> {
  const properties = (schema as SchemaNode).properties ?? {};
  return Object.fromEntries(
    Object.entries(properties)
      .map(([name, node]) => [name, fieldLimits(node)] as const)
      .filter(([, limits]) => Object.keys(limits).length > 0),
  );
}

/** By form: the body (or query) schema of the route each of the console's forms sends to. */
export const CONSOLE_LIMITS = {
  product: limitsOf(ProductCreateBody),
  software: limitsOf(SoftwareConfigBody),
  coupon: limitsOf(CouponCreateBody),
  taxRate: limitsOf(TaxRateBody),
  shippingZone: limitsOf(ShippingZoneBody),
  settings: limitsOf(Settings),
  licenseSearch: limitsOf(LicenseListQuery),
};

export type ConsoleLimits = typeof CONSOLE_LIMITS;
