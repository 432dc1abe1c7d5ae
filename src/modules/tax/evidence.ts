import { createRequire } from 'node:module';

type Lookup = (ip: string) => { country: string } | null;
let lookup: Lookup | null = null;

/**
 * The country of an IP address from the offline database the `geoip-country` package ships
 * (MaxMind's GeoLite2 Country, bundled and read from disk: no network call). The database
 * (some megabytes) is loaded on the first lookup, not when the server starts. Null for a private,
 * reserved or unknown address.
 */
export function ipCountry(ip: string): string | null {
  if (!lookup) {
    const geoip = createRequire(import.meta.url)('geoip-country') as { lookup: Lookup };
    lookup = (address) => geoip.lookup(address);
  }
  const country = lookup(ip)?.country;
  return typeof country === 'string' && /^[A-Z]{2}$/.test(country) ? country : null;
}
