import { createRequire } from 'node:module';
import countries from 'i18n-iso-countries';

/** Country names (i18n-iso-countries) and their states (country-region-data): maintained lists. */
const require = createRequire(import.meta.url);
countries.registerLocale(require('i18n-iso-countries/langs/en.json'));
const regions = require('country-region-data/data.json') as {
  countryShortCode: string;
  regions: { name: string; shortCode?: string }[];
}[];

let cached: {
  countries: { code: string; name: string }[];
  states: Record<string, Record<string, string>>;
} | null = null;

export function countriesAndStates() {
  if (cached) return cached;
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
