import { crc32, deflateRawSync } from 'node:zlib';

export interface ZipEntry {
  name: string;
  data: Buffer;
}

/**
 * A valid zip archive of stored (uncompressed) entries, produced part by part so a benchmark can
 * write a large archive without holding it in memory; `Buffer.concat` of the parts is the archive.
 */
export function* zipParts(entries: Iterable<ZipEntry>, comment = ''): Generator<Buffer> {
  const centrals: Buffer[] = [];
  let offset = 0;
  let count = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name);
    const { data } = entry;
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    yield Buffer.concat([local, name, data]);
    offset += local.length + name.length + data.length;
    count++;
  }
  const cd = Buffer.concat(centrals);
  const c = Buffer.from(comment);
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  eocd.writeUInt16LE(count, 8);
  eocd.writeUInt16LE(count, 10);
  eocd.writeUInt32LE(cd.length, 12);
  eocd.writeUInt32LE(offset, 16);
  eocd.writeUInt16LE(c.length, 20);
  yield Buffer.concat([cd, eocd, c]);
}

export interface Entry {
  name: string;
  data: Buffer | string;
  /** Deflate the entry, as most zip tools do. */
  deflate?: boolean;
  /** Sizes in a data descriptor after the bytes (bit 3), as streaming zip writers do. */
  descriptor?: boolean;
}

/** A zip of stored or deflated entries, with or without data descriptors. */
export function zipOf(entries: Entry[]): Buffer {
  const parts: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const data = Buffer.from(e.data);
    const body = e.deflate ? deflateRawSync(data) : data;
    const name = Buffer.from(e.name);
    const crc = crc32(data);
    const flags = (e.descriptor ? 0x08 : 0) | 0x800;
    const method = e.deflate ? 8 : 0;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt16LE(method, 8);
    if (!e.descriptor) {
      local.writeUInt32LE(crc, 14);
      local.writeUInt32LE(body.length, 18);
      local.writeUInt32LE(data.length, 22);
    }
    local.writeUInt16LE(name.length, 26);
    const descriptor = Buffer.alloc(e.descriptor ? 16 : 0);
    if (e.descriptor) {
      descriptor.writeUInt32LE(0x08074b50, 0);
      descriptor.writeUInt32LE(crc, 4);
      descriptor.writeUInt32LE(body.length, 8);
      descriptor.writeUInt32LE(data.length, 12);
    }
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(flags, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    const part = Buffer.concat([local, name, body, descriptor]);
    parts.push(part);
    offset += part.length;
  }
  const cd = Buffer.concat(centrals);
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  eocd.writeUInt16LE(entries.length, 8);
  eocd.writeUInt16LE(entries.length, 10);
  eocd.writeUInt32LE(cd.length, 12);
  eocd.writeUInt32LE(offset, 16);
  return Buffer.concat([...parts, cd, eocd]);
}

/** A PHP file whose header comment gives these fields (`Plugin Name`, `Version`, …), as WordPress reads them. */
export const pluginHeader = (fields: Record<string, string>) =>
  `<?php\n/**\n${Object.entries(fields)
    .map(([k, v]) => ` * ${k}: ${v}\n`)
    .join('')} */\n\nfunction acme() {}\n`;

/** A plugin zip (`slug/slug.php`, deflated) whose header says `version`, with `extra` bytes so each zip is new. */
export function pluginZip(version: string, slug = 'acme-widget', extra = ''): Buffer {
  return zipOf([
    { name: `${slug}/`, data: '' },
    {
      name: `${slug}/${slug}.php`,
      data: pluginHeader({ 'Plugin Name': 'Acme Widget', Version: version }),
      deflate: true,
    },
    { name: `${slug}/includes/extra.php`, data: `<?php // ${extra}${Math.random()}\n`, deflate: true },
  ]);
}

/** A theme zip (`slug/style.css`) whose header says `version`. */
export function themeZip(version: string, slug = 'acme-theme'): Buffer {
  return zipOf([
    {
      name: `${slug}/style.css`,
      data: `/*\nTheme Name: Acme Theme\nAuthor: Acme Ltd\nVersion: ${version}\n*/\nbody{}\n`,
      deflate: true,
    },
    { name: `${slug}/index.php`, data: `<?php // ${Math.random()}\n` },
  ]);
}
