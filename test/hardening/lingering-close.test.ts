import { randomBytes } from 'node:crypto';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LINGER_BYTES } from '../../src/http/linger.js';
import { createTestApp, multipart, type TestApp } from '../helpers/app.js';
import { softwareProduct } from '../helpers/factories.js';

let t: TestApp;
let base: string;
let productId: number;
beforeAll(async () => {
  t = await createTestApp();
  productId = (await softwareProduct(t)).id;
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => t.close());

/** A multipart upload streamed by Node's fetch in 64 KiB chunks, as an automation script would send it. */
function streamUpload(url: string, bytes: number, headers: Record<string, string> = {}) {
  const { body, contentType } = multipart([
    ['version', '9.9.9'],
    ['file', { filename: 'big.zip', content: randomBytes(bytes) }],
  ]);
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < body.length; i += 65536) controller.enqueue(body.subarray(i, i + 65536));
      controller.close();
    },
  });
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': contentType, ...headers },
    body: stream,
    duplex: 'half',
  } as RequestInit);
}

describe('an upload refused before its body is read is still answered (lingering close)', () => {
  it("Node's fetch streaming 2 MB anonymously receives 401 rest_not_logged_in, 20 times out of 20", async () => {
    for (let i = 0; i < 20; i++) {
      const res = await streamUpload(`${base}/v1/software/products/${productId}/versions`, 2 * 1024 * 1024);
      expect(res.status).toBe(401);
      expect(((await res.json()) as { code: string }).code).toBe('rest_not_logged_in');
    }
  });

  it('300 small anonymous uploads, 10 at a time: every one gets its 401, and no listener piles up on a kept-alive socket', async () => {
    const sockets: Socket[] = [];
    const track = (s: Socket) => sockets.push(s);
    t.app.server.on('connection', track);
    const statuses: number[] = [];
    for (let round = 0; round < 30; round++) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, () =>
          streamUpload(`${base}/v1/products/${productId}/downloads`, 20_000).then(async (r) => {
            await r.arrayBuffer();
            return r.status;
          }),
        ),
      );
      statuses.push(...answers);
    }
    expect(statuses.filter((s) => s !== 401)).toEqual([]);
    t.app.server.off('connection', track);
    // The connections were reused (fewer sockets than requests), and each carries only Node's own
    // few 'close' listeners, not one per request it served.
    expect(sockets.length).toBeLessThan(300);
    expect(Math.max(...sockets.map((s) => s.listenerCount('close')))).toBeLessThan(5);
  });

  it('a refused upload to a missing product is answered 404 after the body, not EPIPE', async () => {
    const res = await streamUpload(
      `${base}/v1/software/products/999999/versions`,
      2 * 1024 * 1024,
      t.adminAuth,
    );
    expect(res.status).toBe(404);
  });

  it(`reads at most ${LINGER_BYTES / 1024 / 1024} MiB after the answer, then closes`, async () => {
    const socket = connect((t.app.server.address() as AddressInfo).port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    let answer = '';
    socket.on('data', (d: Buffer) => {
      answer += d.toString('latin1');
    });
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    socket.on('error', () => {});
    const total = 64 * 1024 * 1024;
    socket.write(
      `POST /v1/software/products/${productId}/versions HTTP/1.1\r\nHost: x\r\n` +
        `Content-Type: multipart/form-data; boundary=b\r\nContent-Length: ${total}\r\n\r\n`,
    );
    const chunk = Buffer.alloc(256 * 1024, 0x61);
    let sent = 0;
    while (sent < total && !socket.destroyed) {
      if (!socket.write(chunk)) await new Promise((r) => socket.once('drain', r).once('close', r));
      sent += chunk.length;
    }
    await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 401 /);
    // The server stopped reading well before the declared 64 MiB.
    expect(sent).toBeLessThan(total);
  });
});
