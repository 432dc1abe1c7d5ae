import { afterAll, beforeAll, expect, it } from 'vitest';
import { Browser } from '../cart/helpers.js';
import { payOrder } from '../checkout/helpers.js';
import { download, pkg, siteCreds } from '../distribution/helpers.js';
import {
  ADMIN,
  basic,
  createTestApp,
  login,
  post,
  postForm,
  setSettings,
  type TestApp,
} from '../helpers/app.js';
import {
  adminId,
  BILLING,
  createCustomer,
  createLicense,
  createOrder,
  identity,
  makeZip,
  softwareProduct,
} from '../helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ captureLogs: true, env: { LOG_LEVEL: 'trace' } });
});
afterAll(async () => t.close());

const CARD = '4242424242424242';

it('at LOG_LEVEL=trace no line holds a password, cookie, nonce, license key, token or card number', async () => {
  const secrets: Record<string, string> = { 'administrator password': ADMIN.password };

  // Sign in: the session cookie and its nonce.
  const session = await login(t.app, ADMIN.email, ADMIN.password);
  secrets['session cookie'] = session.cookie.split('=')[1]!;
  secrets.nonce = session['x-rest-nonce'];

  // An application password, made through the API with the cookie and nonce.
  const made = await t.app.inject({
    method: 'POST',
    url: '/v1/users/me/application-passwords',
    headers: session,
    payload: { name: 'deploy' },
  });
  expect(made.statusCode).toBe(201);
  const appPassword = (made.json() as { password: string }).password;
  const basicHeader = basic(ADMIN.email, appPassword);
  secrets['application password'] = appPassword;
  secrets['Basic credentials'] = basicHeader.slice('Basic '.length);

  // Uploads: one with Basic, one with the cookie and nonce (the multipart plugin sees the headers).
  const product = await softwareProduct(t);
  for (const [version, headers] of [
    ['1.0.0', { authorization: basicHeader }],
    ['1.1.0', session],
  ] as const) {
    const res = await postForm(
      t,
      `/v1/software/products/${product.id}/versions`,
      [
        ['version', version],
        ['file', { filename: 'plugin.zip', content: makeZip(500) }],
      ],
      headers,
    );
    expect(res.statusCode, res.body).toBe(201);
  }
  const catalogueFile = await postForm(
    t,
    `/v1/products/${product.id}/downloads`,
    [['file', { filename: 'old.zip', content: makeZip(200) }]],
    { authorization: basicHeader },
  );
  expect(catalogueFile.statusCode, catalogueFile.body).toBe(201);

  // Activate, ask for a package, download it.
  const license = await createLicense(t, { product_id: product.id, user_id: await adminId(t) });
  secrets['license key'] = license.license_key;
  const site = identity('shop.logs.example.com');
  const act = await post(t, '/licenses/activate', { license_key: license.license_key, ...site });
  expect(act.statusCode).toBe(200);
  const res = await pkg(t, {
    slug: product.slug,
    purpose: 'install',
    ...siteCreds(license.license_key, site),
  });
  expect(res.statusCode, res.body).toBe(200);
  const url = (res.json() as { download_url: string }).download_url;
  secrets['download token'] = new URL(url).searchParams.get('token')!;
  expect((await download(t, url)).statusCode).toBe(200);
  const check = await t.app.inject({
    method: 'GET',
    url: `/v1/software/check?${new URLSearchParams({ slug: product.slug!, ...siteCreds(license.license_key, site), version: '1.0.0' })}`,
  });
  expect(check.statusCode).toBe(200);

  // A customer buys with a card.
  await setSettings(t, { checkout_rate_limit: 1000 });
  const customer = await createCustomer(t, 'card-buyer@example.com');
  secrets['customer password'] = customer.password;
  const b = new Browser(t);
  await b.login(customer.email, customer.password);
  await b.add(product.id);
  secrets['cart cookie'] = b.cookies.get('tollgate_cart')!;
  const order = await createOrder(
    t,
    {
      items: [{ product_id: product.id, qty: 1 }],
      billing: { ...BILLING, email: customer.email },
    },
    b,
  );
  const paid = await payOrder(b, order.order_id, {
    payment_method: 'test_card',
    payment_data: { card_number: CARD },
  });
  expect(paid.statusCode, paid.body).toBe(200);
  secrets['card number'] = CARD;
  secrets['order key'] = order.order_key;

  // A malformed request that is refused: its headers are not logged either.
  await t.app.inject({
    method: 'POST',
    url: '/v1/software/products/1/versions',
    headers: { authorization: basicHeader, 'content-type': 'multipart/form-data' },
    payload: 'garbage',
  });

  const logs = t.logs();
  expect(logs).toContain('"level":10'); // trace lines were written
  expect(logs).toContain('Providing options to busboy');
  const leaked = Object.entries(secrets)
    .filter(([, value]) => logs.includes(value))
    .map(([name]) => name);
  expect(leaked).toEqual([]);
});
