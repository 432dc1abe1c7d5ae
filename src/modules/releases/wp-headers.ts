import { constants, createInflateRaw } from 'node:zlib';

/**
 * What WordPress reads from a plugin's or theme's files, taken from an uploaded zip while it
 * streams (docs/releases.md, 'Metadata WordPress shows'): nothing is extracted to disk and memory
 * stays bounded whatever the archive holds.
 */
export interface PackageMetadata {
  name: string | null;
  description: string | null;
  homepage: string | null;
  author: string | null;
  /** `Requires at least`: the oldest WordPress version. */
  requires: string | null;
  /** `Tested up to`. */
  tested: string | null;
  requires_php: string | null;
}

export const EMPTY_METADATA: PackageMetadata = {
  name: null,
  description: null,
  homepage: null,
  author: null,
  requires: null,
  tested: null,
  requires_php: null,
};

const LOCAL_SIG = 0x04034b50;
const CENTRAL_SIG = 0x02014b50;
const LOCAL_SIG_BYTES = Buffer.from([0x50, 0x4b, 0x03, 0x04]);
const CENTRAL_SIG_BYTES = Buffer.from([0x50, 0x4b, 0x01, 0x02]);
const LOCAL_HEADER = 30;

/** WordPress reads the first 8 KiB of a file for its headers (get_file_data). */
export const HEADER_BYTES = 8192;
/** Compressed bytes kept per file: 8 KiB of text never needs more, even in stored deflate blocks. */
const CAPTURE_BYTES = HEADER_BYTES + 1024;
/** Files whose first bytes are kept: a plugin has few top-level PHP files; more are ignored. */
const MAX_CAPTURES = 32;
/** Local headers walked before the scan gives up (a hostile archive of tiny entries). */
const MAX_ENTRIES = 100_000;

/**
 * A candidate: a `.php` file, `style.css` or `readme.txt` at the archive's top level or one
 * folder down (`my-plugin/my-plugin.php`), where WordPress looks. Names with `..`, backslashes,
 * a leading slash or control characters are never candidates (they are only read, never written,
 * but nothing about them is trusted).
 */
const CANDIDATE = /^(?:([^/]+)\/)?([^/]+\.php|style\.css|readme\.txt)$/i;

interface Capture {
  name: string;
  method: number;
  parts: Buffer[];
  size: number;
}

/**
 * Walks a zip's local file headers as its bytes pass (src/modules/releases/inspect.ts calls
 * `push` with every chunk) and keeps the first compressed bytes of the candidate files. Entries
 * whose sizes the local header gives are skipped without looking inside; an entry that defers its
 * sizes to a data descriptor is followed by a search for the next header. The walk stops at the
 * central directory, at anything it does not recognise, or after MAX_ENTRIES.
 */
export class ZipHeaderScanner {
  private mode: 'header' | 'data' | 'scan' | 'done' = 'header';
  private pending: Buffer[] = [];
  private pendingLen = 0;
  private need = LOCAL_HEADER;
  private remaining = 0;
  private capture: Capture | null = null;
  private entries = 0;
  /** The last bytes of the previous chunk while scanning (a signature split across chunks). */
  private scanTail = Buffer.alloc(0);
  readonly captures: Capture[] = [];

  push(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length && this.mode !== 'done') {
      if (this.mode === 'header') at = this.header(chunk, at);
      else if (this.mode === 'data') at = this.data(chunk, at);
      else at = this.scan(chunk, at);
    }
  }

  private header(chunk: Buffer, at: number): number {
    const take = Math.min(this.need - this.pendingLen, chunk.length - at);
    this.pending.push(Buffer.from(chunk.subarray(at, at + take)));
    this.pendingLen += take;
    at += take;
    if (this.pendingLen < this.need) return at;
    const head = Buffer.concat(this.pending, this.pendingLen);
    if (this.need === LOCAL_HEADER) {
      const sig = head.readUInt32LE(0);
      if (sig !== LOCAL_SIG) {
        this.mode = 'done';
        return at;
      }
      const variable = head.readUInt16LE(26) + head.readUInt16LE(28);
      if (variable > 0) {
        this.need = LOCAL_HEADER + variable;
        this.pending = [head];
        return at;
      }
    }
    this.pending = [];
    this.pendingLen = 0;
    this.need = LOCAL_HEADER;
    this.startEntry(head);
    return at;
  }

  private startEntry(head: Buffer): void {
    this.entries++;
    if (this.entries > MAX_ENTRIES) {
      this.mode = 'done';
      return;
    }
    const flags = head.readUInt16LE(6);
    const method = head.readUInt16LE(8);
    const compressed = head.readUInt32LE(18);
    const nameLength = head.readUInt16LE(26);
    // Bit 11: the name is UTF-8; otherwise CP437, whose ASCII range is all a candidate may use.
    const name = head
      .subarray(LOCAL_HEADER, LOCAL_HEADER + nameLength)
      .toString(flags & 0x800 ? 'utf8' : 'latin1');
    this.capture =
      isCandidate(name) && (method === 0 || method === 8) && this.captures.length < MAX_CAPTURES
        ? { name, method, parts: [], size: 0 }
        : null;
    if (flags & 0x08 || compressed === 0xffffffff) {
      this.mode = 'scan';
      this.scanTail = Buffer.alloc(0);
    } else {
      this.remaining = compressed;
      this.mode = 'data';
      if (compressed === 0) this.endEntry();
    }
  }

  private keep(bytes: Buffer): void {
    const c = this.capture;
    if (!c || c.size >= CAPTURE_BYTES) return;
    const part = bytes.subarray(0, CAPTURE_BYTES - c.size);
    c.parts.push(Buffer.from(part));
    c.size += part.length;
  }

  private endEntry(): void {
    if (this.capture) this.captures.push(this.capture);
    this.capture = null;
    this.mode = 'header';
  }

  private data(chunk: Buffer, at: number): number {
    const take = Math.min(this.remaining, chunk.length - at);
    this.keep(chunk.subarray(at, at + take));
    this.remaining -= take;
    at += take;
    if (this.remaining === 0) this.endEntry();
    return at;
  }

  /** After an entry of unknown size: its bytes run up to the next local header or the central directory. */
  private scan(chunk: Buffer, at: number): number {
    // A signature that began in the bytes already passed (the last three) and ends in this chunk.
    const tail = this.scanTail;
    if (tail.length > 0) {
      const joined = Buffer.concat([tail, chunk.subarray(at, at + 3)]);
      for (let i = 0; i < tail.length && i + 4 <= joined.length; i++) {
        const sig = joined.readUInt32LE(i);
        if (sig !== LOCAL_SIG && sig !== CENTRAL_SIG) continue;
        this.scanTail = Buffer.alloc(0);
        this.endEntry();
        if (sig === CENTRAL_SIG) {
          this.mode = 'done';
          return chunk.length;
        }
        // The header's first bytes were passed already: they start the next header.
        const passed = tail.length - i;
        this.pending = [Buffer.from(LOCAL_SIG_BYTES.subarray(0, passed))];
        this.pendingLen = passed;
        return at;
      }
    }
    const view = chunk.subarray(at);
    const local = view.indexOf(LOCAL_SIG_BYTES);
    const central = view.indexOf(CENTRAL_SIG_BYTES);
    const hit = local === -1 ? central : central === -1 ? local : Math.min(local, central);
    if (hit === -1) {
      this.keep(view);
      // Only the last three bytes are kept (a chunk shorter than that joins what came before).
      const last = view.length >= 3 ? view.subarray(view.length - 3) : Buffer.concat([tail, view]);
      this.scanTail = Buffer.from(last.subarray(Math.max(0, last.length - 3)));
      return chunk.length;
    }
    this.scanTail = Buffer.alloc(0);
    this.keep(view.subarray(0, hit));
    this.endEntry();
    if (hit === central) {
      this.mode = 'done';
      return chunk.length;
    }
    return at + hit;
  }
}

/** Whether any character is at or below `upTo` (control characters, and space when 0x20) or DEL. */
function hasControl(text: string, upTo: number): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c <= upTo || c === 0x7f) return true;
  }
  return false;
}

function isCandidate(name: string): boolean {
  if (name.includes('\\') || name.includes('..') || name.startsWith('/') || hasControl(name, 0x1f)) {
    return false;
  }
  return CANDIDATE.test(name);
}

/** The first `limit` bytes a capture decompresses to; a broken or unsupported stream gives what it gave. */
function firstBytes(capture: Capture, limit: number): Promise<Buffer> {
  const data = Buffer.concat(capture.parts, capture.size);
  if (capture.method === 0) return Promise.resolve(data.subarray(0, limit));
  return new Promise((resolve) => {
    const out: Buffer[] = [];
    let size = 0;
    let settled = false;
    const inflate = createInflateRaw({ finishFlush: constants.Z_SYNC_FLUSH, chunkSize: 4096 });
    const finish = () => {
      if (settled) return;
      settled = true;
      inflate.destroy();
      resolve(Buffer.concat(out, size).subarray(0, limit));
    };
    inflate.on('data', (c: Buffer) => {
      out.push(c);
      size += c.length;
      // A bomb stops here: decompression ends after the first 8 KiB whatever the ratio.
      if (size >= limit) finish();
    });
    inflate.on('end', finish);
    inflate.on('error', finish);
    inflate.on('close', finish);
    inflate.end(data);
  });
}

/**
 * WordPress's `get_file_data()` for one header: a line `Name: value`, optionally after `<?php`
 * and comment characters, case-insensitive; the value trimmed and cut at `*` `/` or `?>`
 * (`_cleanup_header_comment`). The file's first 8 KiB, `\r` read as a line break.
 */
export function headerValue(text: string, header: string): string | null {
  const quoted = header.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const match = new RegExp(`^(?:[ \\t]*<\\?php)?[ \\t/*#@]*${quoted}:(.*)$`, 'mi').exec(text);
  if (!match) return null;
  const value = match[1]!.replace(/\s*(?:\*\/|\?>).*/, '').trim();
  return value === '' ? null : value;
}

/** `6.1`, `8.0`, `5.9.3`: what WordPress and PHP versions look like. */
export const WP_VERSION = /^[0-9]{1,4}(?:\.[0-9]{1,4}){0,3}$/;
export const MAX_NAME = 200;
export const MAX_AUTHOR = 200;
export const MAX_DESCRIPTION = 2000;
export const MAX_URL = 2000;

/** An http(s) URL without credentials, at most MAX_URL characters. */
export function isWebUrl(value: string): boolean {
  // Spaces too: a URL WordPress links to is never written with one.
  if (value.length > MAX_URL || hasControl(value, 0x20)) return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && !url.username && !url.password;
  } catch {
    return false;
  }
}

/** One line of plain text within `max` characters, else null (a header is never trusted). */
export function plain(value: string | null, max: number): string | null {
  if (value === null) return null;
  let text = '';
  for (const ch of value) text += hasControl(ch, 0x1f) ? ' ' : ch;
  text = text.trim();
  return text === '' ? null : text.slice(0, max);
}
const version = (v: string | null) => (v !== null && WP_VERSION.test(v) ? v : null);
const url = (v: string | null) => (v !== null && isWebUrl(v) ? v : null);

/**
 * The header WordPress identifies a package by: a plugin's main file or a theme's `style.css`,
 * and its `Version:` exactly as `get_file_data()` reads it (null when the header has none). A zip
 * with neither header (a Node app, a library) has none.
 */
export interface PackageHeader {
  kind: 'plugin' | 'theme';
  /** The file it was read from, as named in the archive. */
  file: string;
  version: string | null;
}

/** What an upload's zip says about itself: WordPress's metadata, and the header with its version. */
export interface PackageInfo {
  metadata: PackageMetadata;
  header: PackageHeader | null;
}

export const EMPTY_PACKAGE: PackageInfo = { metadata: EMPTY_METADATA, header: null };

/**
 * The metadata of the captured files: the main plugin file (a top-level `.php` with a `Plugin
 * Name` header, the one named after its folder first), else a theme's `style.css` (`Theme Name`);
 * `readme.txt` (next to the main file first) fills the versions the header does not give. A value
 * that is not what its field takes (a version like `6.1`, an http(s) URL, bounded text) is left out.
 * The header's `Version:` is kept as WordPress reads it (the release's version is checked against
 * it: docs/releases.md, 'The version is the zip's').
 */
export async function readPackage(captures: readonly Capture[]): Promise<PackageInfo> {
  const files: { name: string; text: string }[] = [];
  for (const c of captures) {
    const bytes = await firstBytes(c, HEADER_BYTES);
    files.push({ name: c.name, text: bytes.toString('utf8').replaceAll('\r', '\n') });
  }
  const folderOf = (name: string) => CANDIDATE.exec(name)?.[1] ?? '';
  const baseOf = (name: string) => CANDIDATE.exec(name)?.[2] ?? '';
  const plugins = files.filter(
    (f) => f.name.toLowerCase().endsWith('.php') && headerValue(f.text, 'Plugin Name'),
  );
  plugins.sort((a, b) => Number(isNamedAfterFolder(b.name)) - Number(isNamedAfterFolder(a.name)));
  const plugin = plugins[0];
  const theme = plugin
    ? undefined
    : files.find((f) => baseOf(f.name).toLowerCase() === 'style.css' && headerValue(f.text, 'Theme Name'));
  const main = plugin ?? theme;
  const readmes = files.filter((f) => baseOf(f.name).toLowerCase() === 'readme.txt');
  const readme = (main && readmes.find((r) => folderOf(r.name) === folderOf(main.name))) ?? readmes[0];
  const get = (header: string) => (main ? headerValue(main.text, header) : null);
  const fromReadme = (header: string) => (readme ? headerValue(readme.text, header) : null);
  const either = (header: string) => version(get(header)) ?? version(fromReadme(header));
  const metadata = {
    name: plain(get(plugin ? 'Plugin Name' : 'Theme Name'), MAX_NAME),
    description: plain(get('Description'), MAX_DESCRIPTION),
    homepage: url(get(plugin ? 'Plugin URI' : 'Theme URI')),
    author: plain(get('Author'), MAX_AUTHOR),
    requires: either('Requires at least'),
    tested: either('Tested up to'),
    requires_php: either('Requires PHP'),
  };
  const header: PackageHeader | null = main
    ? { kind: plugin ? 'plugin' : 'theme', file: main.name, version: get('Version') }
    : null;
  return { metadata, header };
}

function isNamedAfterFolder(name: string): boolean {
  const m = CANDIDATE.exec(name);
  return m?.[1] !== undefined && m[2]!.toLowerCase() === `${m[1].toLowerCase()}.php`;
}
