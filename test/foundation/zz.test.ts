import { it } from 'vitest';
import { createTestApp } from '../helpers/app.js';

it('probe', async () => {
  const t = await createTestApp();
  for (const url of [
    '/v1/licenses/' + '1'.repeat(600),
    '/v1/orders/%E0%A4%A',
    '/v1/software/changelog?slug=%00',
    '/v1/orders/1%00',
    '/v1/x?a=%zz',
  ]) {
    const r = await t.app.inject({ method: 'GET', url, headers: t.adminAuth });
    console.log('RES', url.slice(0, 40), r.statusCode, r.body.slice(0, 200));
  }
  const r = await t.app.inject({
    method: 'POST',
    url: '/v1/products/1/downloads',
    headers: { ...t.adminAuth, 'content-type': 'multipart/form-data' },
    payload: 'abc',
  });
  console.log('RES mp', r.statusCode, r.body.slice(0, 300));
  await t.close();
});
