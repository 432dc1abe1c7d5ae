import { crc32 } from 'node:zlib';

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
