/**
 * The version a WordPress plugin or theme zip says it is, read in the browser from the file the
 * owner chose, the way the server reads it when it checks an upload (docs/releases.md, 'The
 * version is the zip's'): the main plugin file (a top-level `.php` with a `Plugin Name:` header,
 * the one named after its folder first), else a theme's `style.css` (`Theme Name:`), and its
 * `Version:` in the file's first 8 KiB. Only the end of the zip, its central directory and the
 * first bytes of a few candidate files are read; nothing in the archive is trusted.
 */

export interface ZipHeader {
  kind: 'plugin' | 'theme';
  /** Null when the header has no `Version:` line. */
  version: string | null;
}

/** WordPress reads the first 8 KiB of a file for its headers (get_file_data). */
const HEADER_BYTES = 8192;
/** Compressed bytes read per candidate: 8 KiB of text never needs more. */
const READ_BYTES = HEADER_BYTES + 1024;
const EOCD_SIZE = 22;
const EOCD_MAX = EOCD_SIZE + 0xffff;
/** A plugin's central directory is small; a larger one is not read. */
const MAX_DIRECTORY = 8 * 1024 * 1024;
const MAX_CANDIDATES = 32;
const CANDIDATE = /^(?:([^/]+)\/)?([^/]+\.php|style\.css)$/i;

interface Entry {
  name: string;
  method: number;
  compressed: number;
  offset: number;
}

const bytesOf = async (file: Blob, start: number, end: number) =>
  new DataView(await file.slice(start, end).arrayBuffer());

function isCandidate(name: string): boolean {
  if (name.includes('\\') || name.includes('..') || name.startsWith('/')) return false;
  for (let i = 0; i < name.length; i++)
    if (name.charCodeAt(i) < 0x20 || name.charCodeAt(i) === 0x7f) return false;
  return CANDIDATE.test(name);
}

/** The central directory's candidate entries, or null when the end of the file is no zip's. */
async function candidates(file: Blob): Promise<Entry[] | null> {
  const tailStart = Math.max(0, file.size - EOCD_MAX);
  const tail = await bytesOf(file, tailStart, file.size);
  let eocd = -1;
  for (let i = tail.byteLength - EOCD_SIZE; i >= 0; i--) {
    if (
      tail.getUint32(i, true) === 0x06054b50 &&
      i + EOCD_SIZE + tail.getUint16(i + 20, true) === tail.byteLength
    ) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) return null;
  const size = tail.getUint32(eocd + 12, true);
  const offset = tail.getUint32(eocd + 16, true);
  if (size > MAX_DIRECTORY || offset + size > tailStart + eocd) return null;
  const dir = await bytesOf(file, offset, offset + size);
  const found: Entry[] = [];
  const utf8 = new TextDecoder('utf-8');
  const latin1 = new TextDecoder('latin1');
  for (let at = 0; at + 46 <= dir.byteLength && found.length < MAX_CANDIDATES; ) {
    if (dir.getUint32(at, true) !== 0x02014b50) break;
    const flags = dir.getUint16(at + 8, true);
    const nameLength = dir.getUint16(at + 28, true);
    const next = at + 46 + nameLength + dir.getUint16(at + 30, true) + dir.getUint16(at + 32, true);
    if (at + 46 + nameLength > dir.byteLength) break;
    const raw = new Uint8Array(dir.buffer, dir.byteOffset + at + 46, nameLength);
    const name = (flags & 0x800 ? utf8 : latin1).decode(raw);
    const method = dir.getUint16(at + 10, true);
    if (isCandidate(name) && (method === 0 || method === 8)) {
      found.push({
        name,
        method,
        compressed: dir.getUint32(at + 20, true),
        offset: dir.getUint32(at + 42, true),
      });
    }
    at = next;
  }
  return found;
}

/** At most the first 8 KiB of an entry, inflated; a broken stream gives what it gave. */
async function firstBytes(file: Blob, entry: Entry): Promise<Uint8Array> {
  const local = await bytesOf(file, entry.offset, entry.offset + 30);
  if (local.byteLength < 30 || local.getUint32(0, true) !== 0x04034b50) return new Uint8Array();
  const start = entry.offset + 30 + local.getUint16(26, true) + local.getUint16(28, true);
  const data = file.slice(start, start + Math.min(entry.compressed, READ_BYTES));
  if (entry.method === 0) return new Uint8Array(await data.slice(0, HEADER_BYTES).arrayBuffer());
  const out = new Uint8Array(HEADER_BYTES);
  let size = 0;
  const reader = data.stream().pipeThrough(new DecompressionStream('deflate-raw')).getReader();
  try {
    while (size < HEADER_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      const take = value.subarray(0, HEADER_BYTES - size);
      out.set(take, size);
      size += take.length;
    }
  } catch {
    // Cut off (we read only the first bytes) or corrupt: what was inflated so far is all there is.
  } finally {
    reader.cancel().catch(() => {});
  }
  return out.subarray(0, size);
}

/** WordPress's get_file_data() for one header (see src/modules/releases/wp-headers.ts, headerValue). */
function headerValue(text: string, header: string): string | null {
  const quoted = header.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const match = new RegExp(`^(?:[ \\t]*<\\?php)?[ \\t/*#@]*${quoted}:(.*)$`, 'mi').exec(text);
  if (!match) return null;
  const value = (match[1] ?? '').replace(/\s*(?:\*\/|\?>).*/, '').trim();
  return value === '' ? null : value;
}

/** The plugin or theme header of a zip and its version; null for any other file (or one that is no zip). */
export async function zipHeader(file: Blob): Promise<ZipHeader | null> {
  const entries = await candidates(file).catch(() => null);
  if (!entries) return null;
  const files: { name: string; text: string }[] = [];
  const decoder = new TextDecoder('utf-8');
  for (const e of entries) {
    const bytes = await firstBytes(file, e).catch(() => new Uint8Array());
    files.push({ name: e.name, text: decoder.decode(bytes).replaceAll('\r', '\n') });
  }
  const namedAfterFolder = (name: string) => {
    const m = CANDIDATE.exec(name);
    return m?.[1] !== undefined && m[2]?.toLowerCase() === `${m[1].toLowerCase()}.php`;
  };
  const plugins = files
    .filter((f) => f.name.toLowerCase().endsWith('.php') && headerValue(f.text, 'Plugin Name'))
    .sort((a, b) => Number(namedAfterFolder(b.name)) - Number(namedAfterFolder(a.name)));
  const plugin = plugins[0];
  if (plugin) return { kind: 'plugin', version: headerValue(plugin.text, 'Version') };
  const theme = files.find(
    (f) =>
      (CANDIDATE.exec(f.name)?.[2] ?? '').toLowerCase() === 'style.css' && headerValue(f.text, 'Theme Name'),
  );
  return theme ? { kind: 'theme', version: headerValue(theme.text, 'Version') } : null;
}
