import { type Static, type TSchema, Type } from 'typebox';
import { PlainText } from '../../http/schemas.js';
import { EntitlementPolicyInput } from './policy.js';

/** Shapes shared by the catalogue's resources. */

/** A non-negative decimal amount as text ("49.00"); the currency's own decimals are checked later. */
export const Money = Type.String({ pattern: '^\\d{1,9}(\\.\\d{1,6})?$', maxLength: 16 });

export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

export const PRODUCT_TYPES = ['simple', 'variable', 'subscription', 'variable-subscription'] as const;
export const ProductType = Type.Enum(PRODUCT_TYPES);
export const ProductStatus = Type.Enum(['publish', 'draft']);
export const ActivationMode = Type.Enum(['simple', 'oauth']);
export const StorageDriver = Type.Enum(['', 'local', 'local_encrypted', 'external']);

/** One policy schema for products and licenses; days are range-checked by `normalisePolicy`. */
export const EntitlementPolicy = EntitlementPolicyInput;

export const Subscription = Type.Object(
  {
    period: Type.Enum(['day', 'week', 'month', 'year']),
    interval: Type.Integer({ minimum: 1, maximum: 1000 }),
  },
  { additionalProperties: false },
);

/** Attribute name -> value, e.g. {"Sites": "5"}; plain text both sides. */
export const Attributes = Type.Unsafe<Record<string, string>>({
  type: 'object',
  maxProperties: 20,
  propertyNames: { type: 'string', minLength: 1, maxLength: 100, pattern: '^[^\\u0000-\\u001f\\u007f]*$' },
  additionalProperties: PlainText({ maxLength: 200 }),
});

const ActivationLimit = Type.Integer({ minimum: 0, maximum: 1_000_000 });
const Stock = Type.Integer({ minimum: 0, maximum: 1_000_000_000 });

const variationFields = {
  name: PlainText({ minLength: 1, maxLength: 200 }),
  price: Money,
  attributes: Type.Optional(Attributes),
  // "" and null both mean "inherit the parent's limit" (docs/catalogue.md); 0 is unlimited.
  activation_limit: Type.Optional(Type.Union([ActivationLimit, Type.Literal(''), Type.Null()])),
  stock_quantity: Type.Optional(Nullable(Stock)),
  entitlement_policy: Type.Optional(Nullable(EntitlementPolicy)),
};
export const VariationInput = Type.Object(variationFields, { additionalProperties: false });
export type VariationInput = Static<typeof VariationInput>;

/** In a PATCH, a variation with `id` replaces that variation; without, it is added. */
export const VariationPatchInput = Type.Object(
  { id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647 })), ...variationFields },
  { additionalProperties: false },
);
export type VariationPatchInput = Static<typeof VariationPatchInput>;

const productFields = {
  name: PlainText({ minLength: 1, maxLength: 200 }),
  status: Type.Optional(ProductStatus),
  type: Type.Optional(ProductType),
  price: Type.Optional(Money),
  virtual: Type.Optional(Type.Boolean()),
  stock_quantity: Type.Optional(Nullable(Stock)),
  licensing_enabled: Type.Optional(Nullable(PlainText({ maxLength: 100 }))),
  activation_limit: Type.Optional(Nullable(ActivationLimit)),
  activation_mode: Type.Optional(Nullable(ActivationMode)),
  subscription: Type.Optional(Nullable(Subscription)),
  entitlement_policy: Type.Optional(Nullable(EntitlementPolicy)),
  // The storefront's texts (docs/storefront.md). The slug, the page's address, is given one from
  // the name at creation and changed through the software configuration route.
  short_description: Type.Optional(PlainText({ maxLength: 300 })),
  // Line breaks allowed (paragraphs), no other control character.
  description: Type.Optional(
    Type.String({ maxLength: 20_000, pattern: '^[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f]*$' }),
  ),
};

// No `default` keywords: the validator would insert them into PATCH bodies too; the service applies defaults.
export const ProductCreateBody = Type.Object(
  { ...productFields, variations: Type.Optional(Type.Array(VariationInput, { maxItems: 100 })) },
  { additionalProperties: false },
);
export type ProductCreateBody = Static<typeof ProductCreateBody>;

export const ProductPatchBody = Type.Object(
  {
    ...productFields,
    name: Type.Optional(productFields.name),
    variations: Type.Optional(Type.Array(VariationPatchInput, { maxItems: 100 })),
  },
  { additionalProperties: false },
);
export type ProductPatchBody = Static<typeof ProductPatchBody>;

const PolicyOut = Type.Object({
  usage: Type.Object({ mode: Type.String(), days: Type.Optional(Type.Integer()) }),
  updates: Type.Object({ mode: Type.String(), days: Type.Optional(Type.Integer()) }),
  support: Type.Object({ mode: Type.String(), days: Type.Optional(Type.Integer()) }),
  historical_downloads: Type.Boolean(),
  channels: Type.Optional(Type.Array(Type.String())),
});

export const VariationResponse = Type.Object({
  id: Type.Integer(),
  product_id: Type.Integer(),
  name: Type.String(),
  price: Type.String(),
  attributes: Type.Unsafe<Record<string, string>>({
    type: 'object',
    additionalProperties: { type: 'string' },
  }),
  activation_limit: Nullable(Type.Integer()),
  stock_quantity: Nullable(Type.Integer()),
  entitlement_policy: Nullable(PolicyOut),
});

const softwareFields = {
  slug: Nullable(Type.String()),
  trial_days: Nullable(Type.Integer({ description: 'Length of the trial in days; null = no trial' })),
  trial_sites: Type.Integer({ description: 'How many sites a trial license activates' }),
  legacy_api: Type.Boolean({
    description: "Answer the legacy updaters' API for this product (a site identified by its URL only)",
  }),
  upgrade_paths: Type.Array(Type.Integer(), {
    description: 'Products a license of this one may upgrade or downgrade to, besides its own variations',
  }),
  filename_template: Type.String(),
  storage_driver: Type.String(),
  licensing_enabled: Nullable(Type.String()),
  software_enabled: Type.String(),
  icon: Nullable(
    Type.String({
      description:
        'Content hash of the icon WordPress shows; the files are /media/<icon>-icon-128.webp and -icon-256.webp',
    }),
  ),
  banner: Nullable(
    Type.String({
      description:
        'Content hash of the banner WordPress shows; the files are /media/<banner>-banner-772x250.webp and -banner-1544x500.webp',
    }),
  ),
};

export const ProductResponse = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  status: Type.String(),
  type: Type.String(),
  price: Type.String(),
  virtual: Type.Boolean(),
  stock_quantity: Nullable(Type.Integer()),
  activation_limit: Nullable(Type.Integer()),
  activation_mode: Nullable(Type.String()),
  subscription: Nullable(Type.Object({ period: Type.String(), interval: Type.Integer() })),
  entitlement_policy: Nullable(PolicyOut),
  variations: Type.Array(VariationResponse),
  ...softwareFields,
  short_description: Type.String(),
  description: Type.String(),
  image: Nullable(
    Type.String({ description: 'Content hash; the files are /media/<image>-400.webp and -1200.webp' }),
  ),
  created_at: Type.String(),
  updated_at: Type.String(),
});

const pageFields = {
  page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 }),
  per_page: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
};
/** For routes that take no query parameters: anything sent is refused, not ignored. */
export const NoQuery = Type.Object({}, { additionalProperties: false });

/** The answer of a deletion. */
export const Success = Type.Object({ success: Type.Boolean() });

export const PageQuery = Type.Object(pageFields, { additionalProperties: false });
export type PageQuery = Static<typeof PageQuery>;

export const ProductListQuery = Type.Object(
  {
    ...pageFields,
    status: Type.Optional(ProductStatus),
    type: Type.Optional(ProductType),
    search: Type.Optional(PlainText({ minLength: 1, maxLength: 200 })),
    sort: Type.Optional(
      Type.Enum(['id', 'name', 'created_at', 'price', 'status'], {
        description: 'Default id; ties are broken by id; name ignores letter case (docs/catalogue.md)',
      }),
    ),
    order: Type.Optional(
      Type.Enum(['asc', 'desc'], { description: 'Default desc for id and created_at, asc otherwise' }),
    ),
  },
  { additionalProperties: false },
);
export type ProductListQuery = Static<typeof ProductListQuery>;

export const ProductIdParams = Type.Object({ product_id: Type.Integer({ minimum: 1, maximum: 2147483647 }) });

export const SoftwareConfigBody = Type.Object(
  {
    slug: Type.Optional(Type.String({ pattern: '^[a-z0-9-]{1,100}$' })),
    filename_template: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    storage_driver: Type.Optional(StorageDriver),
    licensing_enabled: Type.Optional(Nullable(PlainText({ maxLength: 100 }))),
    software_enabled: Type.Optional(Type.Enum(['yes', 'no'])),
    trial_days: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 365 }))),
    trial_sites: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    legacy_api: Type.Optional(Type.Boolean()),
    upgrade_paths: Type.Optional(
      Type.Array(Type.Integer({ minimum: 1, maximum: 2147483647 }), { maxItems: 20, uniqueItems: true }),
    ),
  },
  { additionalProperties: false },
);
export type SoftwareConfigBody = Static<typeof SoftwareConfigBody>;

export const SoftwareConfigResponse = Type.Object({ product_id: Type.Integer(), ...softwareFields });
