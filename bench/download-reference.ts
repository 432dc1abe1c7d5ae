import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { createServer } from 'node:http';
import { basename, dirname } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { EncryptedVaultDriver } from '../src/modules/releases/storage/encrypted.js';
import { Vault } from '../src/modules/releases/storage/vault.js';
import { Keyring } from '../src/modules/vault/keyring.js';

/**
 * The reference a download is measured against: no framework, no database, no token. Per
 * request it does the same integrity work the service must do before the first byte, a full
 * SHA-256 pass over the file (or, with KEY set, one authenticated decryption pass), then streams
 * the plaintext in 1 MiB reads.
 */
const FILE = process.env.FILE!;
const SIZE = Number(process.env.SIZE);
const SHA = process.env.SHA!;
const KEY = process.env.KEY ? Buffer.from(process.env.KEY, 'base64') : null;
const MiB = 1024 * 1024;

const vault = new Vault(dirname(dirname(FILE)), []);
const encrypted = KEY ? new EncryptedVaultDriver(vault, new Keyring(KEY, [], '/nonexistent/key')) : null;
const ref = {
  storageKey: `${basename(dirname(FILE))}/${basename(FILE)}`,
  keyId: null as string | null,
  fileSize: SIZE,
  sha256: SHA,
};

const server = createServer(async (_req, res) => {
  try {
    let body: AsyncIterable<Buffer> | NodeJS.ReadableStream;
    if (encrypted) {
      const v = await encrypted.verify({ ...ref });
      if (!v.ok) throw new Error(v.reason);
      body = await encrypted.open({ ...ref });
    } else {
      const hash = createHash('sha256');
      for await (const chunk of createReadStream(FILE, { highWaterMark: MiB })) hash.update(chunk as Buffer);
      if (hash.digest('hex') !== SHA) throw new Error('hash mismatch');
      body = createReadStream(FILE, { highWaterMark: MiB });
    }
    res.writeHead(200, { 'content-type': 'application/zip', 'content-length': String(SIZE) });
    await pipeline(body, res);
  } catch (e) {
    res.destroy(e as Error);
  }
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const a = server.address();
  console.log(`listening on http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
