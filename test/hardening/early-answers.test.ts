import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cluster, startCluster } from '../helpers/server.js';

/**
 * Every early answer reaches the client (src/http/linger.ts): a JSON body over BODY_LIMIT sent to
 * any JSON route of the OpenAPI document, mixed with ordinary requests on the same kept-alive
 * connections, is answered 4xx in the envelope and read by Node's fetch every time, whatever ran
 * before on that connection. Real HTTP on 127.0.0.1, to a server process of its own (in the
 * test's own process the client's writes and the server's reads take turns, and the reset that
 * Node's fetch met does not happen).
 */

let cluster: Cluster;
let base: string;
beforeAll(async () => {
  cluster = await startCluster();
  base = cluster.servers[0]!.url;
}, 60_000);
afterAll(async () => cluster.stop());

interface Operation {
  method: string;
  path: string;
}

/** The operations of the OpenAPI document that take a JSON body, their path parameters set to 1. */
async function jsonOperations(): Promise<Operation[]> {
  const doc = (await (await fetch(`${base}/v1/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { requestBody?: { content?: Record<string, unknown> } }>>;
  };
  const out: Operation[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      if (!op.requestBody?.content?.['application/json']) continue;
      out.push({ method: method.toUpperCase(), path: path.replace(/\{[^}]+\}/g, '1') });
    }
  }
  return out;
}

const TWO_MB = Buffer.from(JSON.stringify({ padding: 'x'.repeat(2 * 1024 * 1024) }));

describe('early answers on kept-alive connections', () => {
  it.each([1, 2])(
    'a 2 MB body to every JSON route, between ordinary requests, over %i connection(s): every answer read',
    async (connections) => {
      const ops = await jsonOperations();
      expect(ops.length).toBeGreaterThan(50);
      const dispatcher = new Agent({ connections, keepAliveTimeout: 30_000, pipelining: 1 });
      const failures: string[] = [];
      const send = async (label: string, init: RequestInit & { dispatcher: Agent }, url: string) => {
        try {
          const res = await fetch(url, init as RequestInit);
          const body = (await res.json()) as { code?: string };
          return { status: res.status, code: body.code };
        } catch (e) {
          failures.push(`${label}: ${(e as Error).message} ${String((e as Error).cause)}`);
          return null;
        }
      };
      try {
        // One after the other: each 2 MB body right after another one on the same connection.
        for (const op of ops) {
          for (let k = 0; k < 2; k++) {
            const big = await send(
              `${op.method} ${op.path} (in turn)`,
              {
                dispatcher,
                method: op.method,
                headers: { 'content-type': 'application/json' },
                body: TWO_MB,
              },
              `${base}${op.path}`,
            );
            if (big)
              expect(big, `${op.method} ${op.path}`).toEqual({ status: 413, code: 'rest_body_too_large' });
          }
        }
        // All at once, each after a different ordinary request on whichever connection is free.
        const work = ops.map(async (op, i) => {
          // What runs before on the connection varies: a small request that is answered with a
          // body, one answered with an error, or nothing.
          if (i % 3 === 0) await send('health', { dispatcher }, `${base}/v1/health`);
          if (i % 3 === 1) {
            await send(
              'small',
              { dispatcher, method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":' },
              `${base}/v1/auth/login`,
            );
          }
          const big = await send(
            `${op.method} ${op.path}`,
            { dispatcher, method: op.method, headers: { 'content-type': 'application/json' }, body: TWO_MB },
            `${base}${op.path}`,
          );
          if (big) {
            expect(big.status, `${op.method} ${op.path}`).toBeGreaterThanOrEqual(400);
            expect(big.status, `${op.method} ${op.path}`).toBeLessThan(500);
            expect(typeof big.code, `${op.method} ${op.path}`).toBe('string');
          }
        });
        await Promise.all(work);
      } finally {
        await dispatcher.close();
      }
      expect(failures).toEqual([]);
    },
    120_000,
  );
});
