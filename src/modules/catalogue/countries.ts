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
