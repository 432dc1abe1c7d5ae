/** How the console writes dates, sizes and limits. */

const dateTime = new Intl.DateTimeFormat(undefined, {
  dateStyle: 'medium',
  timeStyle: 'short',
  timeZone: 'UTC',
});
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeZone: 'UTC' });

/** The API's timestamps are UTC, either RFC 3339 or `YYYY-MM-DD HH:MM:SS`. */
export function parseUtc(value: string): Date | null {
  const iso = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}/.test(value) ? `${value.replace(' ', 'T')}Z` : value;
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? null : d;
}

export function when(value: string | null | undefined, fallback = '—'): string {
  if (!value) return fallback;
  const d = parseUtc(value);
  return d ? `${dateTime.format(d)} UTC` : value;
}

export function day(value: string | null | undefined, fallback = '—'): string {
  if (!value) return fallback;
  const d = parseUtc(value);
  return d ? dateOnly.format(d) : value;
}

export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return '—';
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

/** An activation limit: 0 means unlimited; null means inherited from the product or the store. */
export function limit(n: number | null | undefined): string {
  if (n === null || n === undefined) return 'inherited';
  return n === 0 ? 'unlimited' : String(n);
}

/** A guess at the version in a file name: `my-plugin-1.4.0.zip` gives `1.4.0`. */
export function versionFromFileName(name: string): string {
  const m = /(\d+(?:\.\d+)*(?:[-+._]?[A-Za-z0-9]+)*)\.zip$/i.exec(name);
  return m?.[1] ?? '';
}

/** The SHA-256 of a file, in hex, when the browser offers it (a secure context) and the file is not huge. */
export async function sha256Hex(file: File): Promise<string | null> {
  if (!globalThis.crypto?.subtle || file.size > 256 * 1024 * 1024) return null;
  const digest = await crypto.subtle.digest('SHA-256', await file.arrayBuffer());
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}
