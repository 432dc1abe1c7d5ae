import { createRequire } from 'node:module';
import { EU_COUNTRIES } from '../catalogue/digital-rates.js';
import type { VatCheck } from '../orders/orders.model.js';

/** A VAT number that passed the local format and checksum test. */
export interface VatNumber {
  /** Upper case, without spaces, dots or hyphens, with its country prefix: "FR40303265045". */
  value: string;
  /** ISO 3166-1 alpha-2 of the issuing country ("GR" for a Greek "EL…" number). */
  country: string;
}

/**
 * The rules of every country, loaded with the first VAT number a store is given: most stores never
 * see one, and an idle server does not hold them (docs/performance.md, 'What an idle server loads').
 */
let jsvat: typeof import('jsvat') | undefined;

/**
 * The number's form and check digits, offline (the `jsvat` rules of each country). A number must
 * start with its country prefix ("DE…", "EL…" for Greece), as invoices print it. Null = not a VAT
 * number of any country the rules know.
 */
export function parseVatNumber(raw: string): VatNumber | null {
  const value = raw.toUpperCase().replace(/[\s.-]/g, '');
  if (!/^[A-Z]{2}[A-Z0-9]{2,20}$/.test(value)) return null;
  jsvat ??= createRequire(import.meta.url)('jsvat') as typeof import('jsvat');
  const result = jsvat.checkVAT(value, jsvat.countries);
  const country = result.country?.isoCode.short;
  if (!result.isValid || !country) return null;
  return { value, country };
}

/** What VIES answered: valid or invalid, or nothing usable in time. */
export type ViesAnswer =
  | { status: 'valid'; name: string | null }
  | { status: 'invalid' }
  | { status: 'unavailable' };

/**
 * The European Commission's VIES service, in its REST form: `POST {url}/check-vat-number` with
 * `{countryCode, vatNumber}`, answered `{valid, name, address, requestDate, userError, …}`. Any
 * other answer (an error status, a member state's system down, a body without `valid`, no answer
 * within the timeout) is `unavailable`: checkout then charges VAT and notes it on the order, never blocks.
 */
export class ViesClient {
  constructor(
    /** VIES_URL (docs/taxes.md): the REST API's base, without a trailing slash. */
    private readonly url: string,
    private readonly timeoutMs: number,
  ) {}

  async check(vat: VatNumber): Promise<ViesAnswer> {
    // VIES names Greece EL, as Greek VAT numbers do.
    const countryCode = vat.country === 'GR' ? 'EL' : vat.country;
    try {
      const res = await fetch(`${this.url}/check-vat-number`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ countryCode, vatNumber: vat.value.slice(2) }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      if (!res.ok) return { status: 'unavailable' };
      const body = (await res.json()) as { valid?: unknown; name?: unknown; userError?: unknown };
      // A member state's system down is answered `valid: false` with userError MS_UNAVAILABLE
      // (or TIMEOUT, …): not a refusal of the number.
      if (typeof body.userError === 'string' && body.userError !== 'VALID' && body.userError !== 'INVALID') {
        return { status: 'unavailable' };
      }
      if (body.valid === true) {
        // VIES answers "---" where a member state does not disclose the name.
        const name = typeof body.name === 'string' && /\w/.test(body.name) ? body.name.slice(0, 200) : null;
        return { status: 'valid', name };
      }
      return body.valid === false ? { status: 'invalid' } : { status: 'unavailable' };
    } catch {
      return { status: 'unavailable' };
    }
  }
}

/** What a checkout's VAT number comes to (docs/taxes.md, 'VAT numbers'). */
export interface VatDecision {
  number: VatNumber;
  check: VatCheck;
  /** No VAT: a business buyer's valid number of a member state other than the seller's. */
  reverseCharge: boolean;
}

/**
 * Checks a buyer's VAT number: the form locally (null when it fails: the caller refuses it),
 * then, for a member state's number, with VIES. A valid number of another member state than
 * `sellerCountry` is sold with reverse charge; the seller's own country's, or one VIES could not
 * confirm in time, is charged VAT.
 */
export async function decideVat(
  vies: ViesClient,
  raw: string,
  sellerCountry: string,
  now: string,
): Promise<VatDecision | null> {
  const number = parseVatNumber(raw);
  if (!number) return null;
  const check = (status: VatCheck['status'], name: string | null = null): VatCheck => ({
    status,
    country: number.country,
    name,
    checked_at: now,
  });
  if (!EU_COUNTRIES.has(number.country)) {
    return { number, check: check('not_checked'), reverseCharge: false };
  }
  const answer = await vies.check(number);
  if (answer.status === 'invalid') return { number, check: check('invalid'), reverseCharge: false };
  if (answer.status === 'unavailable') return { number, check: check('unverified'), reverseCharge: false };
  return { number, check: check('valid', answer.name), reverseCharge: number.country !== sellerCountry };
}
