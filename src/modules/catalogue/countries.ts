import { createRequire } from 'node:module';
// The library without its node entry, which registers all of its 80 languages (about 8 MB held
// for the life of the server, docs/performance.md, 'Memory'); English is registered where names are needed.
import countries from 'i18n-iso-countries/index.js';
import { ApiError } from '../../http/errors.js';

/** ISO 3166-1 alpha-2 membership comes from a maintained list, never a hand-written one. */
export function requireCountry(code: string, field = 'country'): void {
  if (!/^[A-Z]{2}$/.test(code) || !countries.isValid(code)) {
    throw new ApiError('invalid_country', { data: { params: { [field]: code } } });
  }
}

/**
 * Country names (i18n-iso-countries) and their states (country-region-data): maintained lists,
 * read when a page first needs them, so that a server no one has bought from yet holds neither
 * (docs/performance.md, 'What an idle server loads').
 */
const require = createRequire(import.meta.url);

let cached: {
  countries: { code: string; name: string }[];
  states: Record<string, Record<string, string>>;
} | null = null;

export function countriesAndStates() {
  if (cached) return cached;
  countries.registerLocale(require('i18n-iso-countries/langs/en.json'));
  const regions = require('country-region-data/data.json') as {
    countryShortCode: string;
    regions: { name: string; shortCode?: string }[];
  }[];
  const names = countries.getNames('en', { select: 'official' });
  const list = Object.entries(names)
    .map(([code, name]) => ({ code, name }))
    .sort((a, b) => a.name.localeCompare(b.name, 'en'));
  const states: Record<string, Record<string, string>> = {};
  for (const c of regions) {
    if (!names[c.countryShortCode]) continue;
    const entries = c.regions.filter((r) => r.shortCode).map((r) => [r.shortCode!, r.name] as const);
    if (entries.length > 0) states[c.countryShortCode] = Object.fromEntries(entries);
  }
  cached = { countries: list, states };
  return cached;
}
