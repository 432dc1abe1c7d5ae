import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, expectError, postForm, type TestApp } from '../helpers/app.js';
import { createProduct, softwareProduct } from '../helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const json = (url: string, body: string, headers: Record<string, string> = {}) =>
  t.app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json', ...headers },
    payload: body,
  });

/** The number of rows of the tables an anonymous request could write to. */
async function rowCounts() {
  const db = t.db.database.db;
  const out: Record<string, number> = {};
  for (const table of ['users', 'sessions', 'carts', 'cart_sessions', 'licenses', 'orders'] as const) {
    const row = await db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    out[table] = Number(row.n);
  }
  return out;
}

describe('a NUL character is refused at the edge, alike on both databases', () => {
  it('in a JSON string, a JSON key, the path and the query: 400 rest_invalid_param, nothing written', async () => {
    const before = await rowCounts();
    for (const [url, body] of [
      ['/v1/auth/login', '{"email":"\\u0000","password":"x"}'],
      ['/v1/auth/login', '{"email":"a@example.com","password":"pass\\u0000word"}'],
      ['/v1/licenses/validate', '{"license_key":"ABC\\u0000"}'],
      ['/v1/cart/add', '{"product_id":1,"variation":{"a\\u0000":"b"}}'],
      ['/v1/checkout/submit', '{"billing":{"email":"x@example.com","first_name":"\\u0000"}}'],
    ] as const) {
      expectError(await json(url, body), 400, 'rest_invalid_param');
    }
    for (const url of [
      '/v1/software/changelog?slug=%00',
      '/v1/software/check?slug=a%00b&license_key=k',
      '/v1/software/products/1/versions/1/external-link?license_key=%00',
      '/v1/orders/1%00',
    ]) {
      expectError(await t.app.inject({ method: 'GET', url }), 400, 'rest_invalid_param');
    }
    // The customer pages answer a person with an HTML page of the same status.
    const page = await t.app.inject({ method: 'GET', url: '/account/sign-in?next=%00' });
    expect(page.statusCode).toBe(400);
    const form = await t.app.inject({
      method: 'POST',
      url: '/account/sign-in',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'email=a%00%40example.com&password=x',
    });
    expect(form.statusCode).toBe(400);
    expect(form.headers['content-type']).toContain('text/html');
    expect(await rowCounts()).toEqual(before);
  });

  it('an escaped backslash before "u0000" is ordinary text, not a NUL', async () => {
    const res = await json('/v1/auth/login', '{"email":"\\\\u0000@example.com","password":"x"}');
    expect(res.statusCode).not.toBe(500);
    expect((res.json() as { code: string }).code).not.toBe('rest_invalid_param');
  });

  it('in a multipart text field of a release upload', async () => {
    const product = await softwareProduct(t);
    const res = await postForm(t, `/v1/software/products/${product.id}/versions`, [['version', '1.0\0']]);
    expectError(res, 400, 'rest_invalid_param');
  });
});

describe('malformed multipart bodies', () => {
  it('a multipart upload without a boundary is a 400 on the catalogue downloads route', async () => {
    const product = await createProduct(t);
    for (const contentType of ['multipart/form-data', 'multipart/form-data; boundary=']) {
      const res = await t.app.inject({
        method: 'POST',
        url: `/v1/products/${product.id}/downloads`,
        headers: { ...t.adminAuth, 'content-type': contentType },
        payload:
          '--x\r\nContent-Disposition: form-data; name="file"; filename="a.zip"\r\n\r\nabc\r\n--x--\r\n',
      });
      expect(res.statusCode, contentType).toBe(400);
      expect((res.json() as { code: string }).code).toMatch(/^(rest_invalid_param|invalid_parameters)$/);
    }
  });
});

describe('every error is in the envelope and echoes nothing of the request', () => {
  it('a path parameter over the length limit: 414 rest_uri_too_long', async () => {
    const long = `SECRET${'7'.repeat(600)}`;
    const res = await t.app.inject({ method: 'GET', url: `/v1/licenses/${long}`, headers: t.adminAuth });
    expectError(res, 414, 'rest_uri_too_long');
    expect(res.body).not.toContain('SECRET');
  });

  it('a path that does not decode: 400 rest_invalid_param', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/orders/%E0%A4%A', headers: t.adminAuth });
    expectError(res, 400, 'rest_invalid_param');
    expect(res.body).not.toContain('%E0');
  });

  describe('over a real socket', () => {
    let port: number;
    beforeAll(async () => {
      await t.app.listen({ host: '127.0.0.1', port: 0 });
      port = (t.app.server.address() as AddressInfo).port;
    });

    /** Sends raw bytes and reads the whole answer until the server closes. */
    const raw = (bytes: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => socket.end(bytes));
        let out = '';
        socket.on('data', (d: Buffer) => {
          out += d.toString('latin1');
        });
        socket.on('close', () => resolve(out));
        socket.on('error', reject);
      });

    const envelope = (answer: string) => {
      const [head, body] = answer.split('\r\n\r\n');
      return {
        status: Number(head!.split(' ')[1]),
        body: JSON.parse(body!) as { code: string; data: { status: number } },
      };
    };

    it('a request that is not HTTP: 400 rest_bad_request', async () => {
      const { status, body } = envelope(await raw('GARBAGE\0SECRET /v1/health HTTP/1.1\r\n\r\n'));
      expect(status).toBe(400);
      expect(body).toMatchObject({ code: 'rest_bad_request', data: { status: 400 } });
    });

    it('headers over the size limit: 431 rest_headers_too_large', async () => {
      const answer = await raw(`GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
      const { status, body } = envelope(answer);
      expect(status).toBe(431);
      expect(body).toMatchObject({ code: 'rest_headers_too_large', data: { status: 431 } });
    });
  });
});
