import { useLocation, useSearch } from 'wouter';

/**
 * A list's filters and page live in the address (`?search=…&page=2`), so a filtered list can be
 * bookmarked, shared and reached again with Back.
 */
export function useUrlState(): [
  URLSearchParams,
  (changes: Record<string, string | number | undefined>) => void,
] {
  const search = useSearch();
  const [location, navigate] = useLocation();
  const params = new URLSearchParams(search);
  const update = (changes: Record<string, string | number | undefined>) => {
    const next = new URLSearchParams(search);
    for (const [k, v] of Object.entries(changes)) {
      if (v === undefined || v === '') next.delete(k);
      else next.set(k, String(v));
    }
    const q = next.toString();
    navigate(q ? `${location}?${q}` : location);
  };
  return [params, update];
}

/** A positive whole number from the address, or the fallback. */
export const positive = (value: string | null, fallback: number) => {
  const n = Number(value);
  return Number.isInteger(n) && n > 0 ? n : fallback;
};
