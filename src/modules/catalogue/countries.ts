import countries from 'i18n-iso-countries';
import { ApiError } from '../../http/errors.js';

/** ISO 3166-1 alpha-2 membership comes from a maintained list, never a hand-written one. */
export function requireCountry(code: string, field = 'country'): void {
  if (!/^[A-Z]{2}$/.test(code) || !countries.isValid(code)) {
    throw new ApiError('invalid_country', { data: { params: { [field]: code } } });
  }
}
