import { type Static, Type } from 'typebox';
import type { ValidationCodes } from '../../http/validation.js';
import { VERSION_PATTERN } from '../releases/releases.model.js';

/**
 * The optional fields by which an update check or a validation says what the site runs
 * (docs/distribution.md, 'What runs in the field'). Names and versions are short and of a plain
 * charset, so nothing a client sends can reach the console as markup.
 */
export const PLATFORM_PATTERN = '^[a-z][a-z0-9_-]{0,31}$';
/** A platform or PHP version: starts with a digit (`8.2.12`, `6.5-RC1`, `8.1.2-1ubuntu2.14`). */
export const HOST_VERSION_PATTERN = '^[0-9][0-9A-Za-z.+_-]{0,63}$';

export const SiteFactInputs = {
  platform: Type.Optional(
    Type.String({
      maxLength: 32,
      pattern: PLATFORM_PATTERN,
      description:
        'What the software runs in, lowercase: `wordpress`, `node`, … (1 to 32 of a-z, 0-9, _ and -, starting with a letter)',
    }),
  ),
  platform_version: Type.Optional(
    Type.String({
      maxLength: 64,
      pattern: HOST_VERSION_PATTERN,
      description:
        'The platform’s version, e.g. WordPress’s `6.5.2`; counted as major.minor, and only with `platform`',
    }),
  ),
  php_version: Type.Optional(
    Type.String({
      maxLength: 64,
      pattern: HOST_VERSION_PATTERN,
      description: 'The PHP version (`PHP_VERSION`), counted as major.minor',
    }),
  ),
};

/** The running version of the product, optional on validate (the update check has its own `version`). */
export const ValidateVersion = Type.Optional(
  Type.String({
    maxLength: 64,
    pattern: VERSION_PATTERN,
    description: 'The version of the product the site runs, counted in the installed-base report (optional)',
  }),
);

/** The 400 codes of the platform fields (the update check's `version` keeps its own rules). */
export const platformCodes = {
  platform: 'invalid_platform',
  platform_version: 'invalid_platform_version',
  php_version: 'invalid_php_version',
} as const satisfies NonNullable<ValidationCodes['invalid']>;

/** The 400 codes of validate's field inputs. */
export const siteFactCodes = { ...platformCodes, version: 'invalid_version' } as const satisfies NonNullable<
  ValidationCodes['invalid']
>;

export const InstalledBaseParams = Type.Object({
  product_id: Type.Integer({ minimum: 1, maximum: 2147483647 }),
});

const Day = Type.String({ description: 'A UTC day, YYYY-MM-DD' });

export const InstalledBaseQuery = Type.Object(
  {
    from: Type.Optional(
      Type.String({ description: 'First UTC day, YYYY-MM-DD (default: `days` - 1 days before `to`)' }),
    ),
    to: Type.Optional(Type.String({ description: 'Last UTC day, YYYY-MM-DD (default: today)' })),
    days: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 400,
        description: 'Without `from`: how many days up to `to`, `to` included (default 30)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type InstalledBaseQuery = Static<typeof InstalledBaseQuery>;

const Share = Type.Number({ description: 'Percent of the sites counted that day, one decimal' });

export const InstalledBaseReport = Type.Object({
  product_id: Type.Integer(),
  from: Day,
  to: Day,
  days: Type.Array(
    Type.Object({
      day: Day,
      sites: Type.Integer({ description: 'Distinct sites that reported a version that day' }),
      versions: Type.Array(Type.Object({ version: Type.String(), sites: Type.Integer() }), {
        description: 'Newest version first',
      }),
    }),
    { description: 'Every day of the range, oldest first; sites 0 and no versions when none reported' },
  ),
  as_of: Type.Union([Day, Type.Null()], {
    description: 'The last day of the range with sites: the day `platforms` and `php` describe',
  }),
  sites: Type.Integer({ description: 'Distinct sites on `as_of` (0 when none)' }),
  platforms: Type.Array(
    Type.Object({
      platform: Type.String(),
      version: Type.String({ description: 'major.minor; empty when the site sent no platform_version' }),
      sites: Type.Integer(),
      share: Share,
    }),
    { description: 'By platform, then newest version first; sites that sent no platform are left out' },
  ),
  php: Type.Array(
    Type.Object({
      version: Type.String({ description: 'major.minor' }),
      sites: Type.Integer(),
      share: Share,
    }),
    {
      description: 'Newest first; sites that sent no php_version are left out',
    },
  ),
});
export type InstalledBaseReport = Static<typeof InstalledBaseReport>;
