/**
 * A product's slug from its name: lower-case ASCII letters, digits and hyphens, at most 80
 * characters so that a suffix ("-2") still fits the 100 allowed (docs/catalogue.md, 'Slug').
 * Accents are dropped ("Café" -> "cafe"); a name with nothing left becomes "product".
 */
export function slugBase(name: string): string {
  const s = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80)
    .replace(/-+$/g, '');
  return s || 'product';
}

/** The well-formed slug of docs/catalogue.md: what a storefront URL may name. */
export const SLUG_PATTERN = /^[a-z0-9-]{1,100}$/;
