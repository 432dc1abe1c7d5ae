// The upload baseline: a plain Node HTTP server (no TypeScript loader, no framework) that writes
// each request body to disk as it arrives and answers 201: no multipart parsing, no hashing, no
// database. bench/upload.ts states the release upload's time as a ratio against this.
import { createWriteStream, mkdirSync, unlinkSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';

const dir = process.env.BARE_DIR ?? join(process.cwd(), 'bench-bare-uploads');
mkdirSync(dir, { recursive: true });
let n = 0;
const server = createServer(async (req, res) => {
  const path = join(dir, `upload-${n++}.bin`);
  try {
    // BARE_FSYNC=1: flushed to the disk before answering, like our durable mode.
    await pipeline(req, createWriteStream(path, { flush: process.env.BARE_FSYNC === '1' }));
    res.writeHead(201, { 'content-type': 'application/json' }).end('{"ok":true}');
  } catch {
    res.writeHead(500).end();
  } finally {
    // Only the write is measured; keep the disk from filling up across runs.
    setTimeout(() => unlinkSync(path), 0);
  }
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const addr = server.address();
  console.log(`listening on http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
