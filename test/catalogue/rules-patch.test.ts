import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, admin, adminOk, createTestApp, expectError, type TestApp } from '../helpers/app.js';
import { type Customer, createCustomer } from '../helpers/factories.js';

let t: TestApp;
let customer: Customer;
beforeAll(async () => {
  t = await createTestApp();
  customer = await createCustomer(t);
});
afterAll(async () => t.close());

const SQL = "'; DROP TABLE tax_rates; --";
const TEN_KB = 'x'.repeat(10 * 1024);

const rawJson = (url: string, body: string) =>
  t.app.inject({
    method: 'PATCH',
    url: `/v1${url}`,
    headers: { ...t.adminAuth, 'content-type': 'application/json' },
    payload: body,
  });

interface Event {
  actor: { email: string };
  action: string;
  changes: Record<string, { before: unknown; after: unknown }>;
}
const history = async (type: string, id: number) =>
  (await admin(t, 'GET', `/audit-events?entity_type=${type}&entity_id=${id}`)).json() as Event[];

/** Anonymous and customer callers are refused and change nothing. */
async function expectAdministratorsOnly(url: string, payload: object, read: () => Promise<unknown>) {
  const before = await read();
  expectError(await t.app.inject({ method: 'PATCH', url: `/v1${url}`, payload }), 401, 'rest_not_logged_in');
  expectError(
    // Unknown fields from an anonymous caller: still 401, as the authorization comes first.
    await t.app.inject({ method: 'PATCH', url: `/v1${url}`, payload: { bogus: true } }),
    401,
    'rest_not_logged_in',
  );
  expectError(
    await t.app.inject({ method: 'PATCH', url: `/v1${url}`, headers: customer.headers, payload }),
    403,
    'rest_forbidden',
  );
  expect(await read()).toEqual(before);
}

describe('creating and deleting a rate or a zone is recorded too', () => {
  it('create and delete: one event each; a refused create or delete records nothing', async () => {
    const rate = await adminOk<{ id: number }>(t, 'POST', '/tax-rates', {
      country: 'FR',
      rate: '20',
      name: 'TVA',
    });
    expect(await history('tax_rate', rate.id)).toMatchObject([
      {
        action: 'create',
        changes: { name: { before: null, after: 'TVA' }, rate: { before: null, after: '20.0000' } },
      },
    ]);
    expectError(
      await admin(t, 'POST', '/tax-rates', { country: 'FR', rate: '200', name: 'x' }),
      400,
      'invalid_tax_rate',
    );
    await adminOk(t, 'DELETE', `/tax-rates/${rate.id}`);
    expectError(await admin(t, 'DELETE', `/tax-rates/${rate.id}`), 404, 'tax_rate_not_found');
    const rateEvents = await history('tax_rate', rate.id);
    expect(rateEvents.map((e) => e.action)).toEqual(['delete', 'create']);
    expect(rateEvents[0]!.changes).toEqual({ name: { before: 'TVA', after: null } });

    const zone = await adminOk<{ id: number }>(t, 'POST', '/shipping-zones', {
      name: 'Islands',
      regions: [{ country: 'IS' }],
      methods: [],
    });
    await adminOk(t, 'DELETE', `/shipping-zones/${zone.id}`);
    expectError(await admin(t, 'DELETE', `/shipping-zones/${zone.id}`), 404, 'shipping_zone_not_found');
    const zoneEvents = await history('shipping_zone', zone.id);
    expect(zoneEvents.map((e) => e.action)).toEqual(['delete', 'create']);
    expect(zoneEvents[1]!.changes.regions).toEqual({ before: null, after: [{ country: 'IS', state: '' }] });
    expect(zoneEvents[0]!.changes).toEqual({ name: { before: 'Islands', after: null } });
  });
});

describe('PATCH /v1/tax-rates/{id}', () => {
  let id: number;
  const read = async () =>
    ((await admin(t, 'GET', '/tax-rates')).json() as { id: number }[]).find((r) => r.id === id);

  beforeAll(async () => {
    id = (await adminOk<{ id: number }>(t, 'POST', '/tax-rates', { country: 'GB', rate: '20', name: 'VAT' }))
      .id;
  });

  it('changes only the fields given, canonical as on create, and records the change', async () => {
    const res = await admin(t, 'PATCH', `/tax-rates/${id}`, { rate: '5', state: 'ENG', shipping: false });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      id,
      country: 'GB',
      state: 'ENG',
      postcode: '',
      rate: '5.0000',
      name: 'VAT',
      shipping: false,
      compound: false,
      priority: 1,
    });
    expect(await read()).toEqual(res.json());
    const [event] = await history('tax_rate', id);
    expect(event).toMatchObject({
      action: 'update',
      actor: { email: ADMIN.email },
      changes: {
        rate: { before: '20.0000', after: '5.0000' },
        state: { before: '', after: 'ENG' },
        shipping: { before: true, after: false },
      },
    });
    expect(Object.keys(event!.changes).sort()).toEqual(['rate', 'shipping', 'state']);
  });

  it('the same values again, or an empty patch, change nothing and record nothing', async () => {
    const events = (await history('tax_rate', id)).length;
    const same = await admin(t, 'PATCH', `/tax-rates/${id}`, { rate: '5.0', name: 'VAT' });
    expect(same.statusCode).toBe(200);
    expect((await admin(t, 'PATCH', `/tax-rates/${id}`, {})).statusCode).toBe(200);
    expect(await history('tax_rate', id)).toHaveLength(events);
  });

  it('an unknown rate is 404 tax_rate_not_found; a malformed id is 400', async () => {
    expectError(await admin(t, 'PATCH', '/tax-rates/999999', { rate: '1' }), 404, 'tax_rate_not_found');
    for (const bad of ['abc', '0', encodeURIComponent(`1${SQL}`)]) {
      expectError(await admin(t, 'PATCH', `/tax-rates/${bad}`, { rate: '1' }), 400, 'rest_invalid_param');
    }
  });

  it('bad input is a specific 4xx and changes nothing', async () => {
    const before = await read();
    const events = (await history('tax_rate', id)).length;
    expectError(await rawJson(`/tax-rates/${id}`, '{"rate":"7"'), 400, 'rest_invalid_json');
    const cases: [unknown, string][] = [
      [{ country: 'XX' }, 'invalid_country'],
      [{ country: 'gb' }, 'invalid_country'],
      [{ country: SQL }, 'invalid_country'],
      [{ country: 44 }, 'invalid_country'],
      [{ rate: '100.0001' }, 'invalid_tax_rate'],
      [{ rate: '-1' }, 'invalid_tax_rate'],
      [{ rate: 20 }, 'invalid_tax_rate'],
      [{ rate: '../20' }, 'invalid_tax_rate'],
      [{ name: '' }, 'rest_invalid_param'],
      [{ name: TEN_KB }, 'rest_invalid_param'],
      [{ name: 'x\u0000' }, 'rest_invalid_param'],
      [{ name: null }, 'rest_invalid_param'],
      [{ postcode: SQL }, 'rest_invalid_param'],
      [{ shipping: 'yes' }, 'rest_invalid_param'],
      [{ priority: 0 }, 'rest_invalid_param'],
      [{ priority: '2' }, 'rest_invalid_param'],
      [{ id: 7 }, 'invalid_parameters'],
      [{ class: 'reduced' }, 'invalid_parameters'],
      [{ rate: '7', class: 'reduced' }, 'invalid_parameters'],
    ];
    for (const [payload, code] of cases)
      expectError(await admin(t, 'PATCH', `/tax-rates/${id}`, payload), 400, code);
    expectError(await admin(t, 'PATCH', `/tax-rates/${id}`, [{ rate: '7' }]), 400, 'rest_invalid_param');
    expect(await read()).toEqual(before);
    expect(await history('tax_rate', id)).toHaveLength(events);
  });

  it('is for administrators only', async () => {
    await expectAdministratorsOnly(`/tax-rates/${id}`, { rate: '99' }, read);
  });
});

describe('PATCH /v1/shipping-zones/{id}', () => {
  let id: number;
  const read = async () =>
    ((await admin(t, 'GET', '/shipping-zones')).json() as { id: number }[]).find((z) => z.id === id);

  beforeAll(async () => {
    id = (
      await adminOk<{ id: number }>(t, 'POST', '/shipping-zones', {
        name: 'Europe',
        regions: [{ country: 'DE' }],
        methods: [{ method_id: 'flat_rate', title: 'Standard', cost: '4.5' }],
      })
    ).id;
  });

  it('renames, and replaces the regions or methods whole, checked as on create; records the change', async () => {
    const renamed = await admin(t, 'PATCH', `/shipping-zones/${id}`, { name: 'EU' });
    expect(renamed.statusCode).toBe(200);
    expect(renamed.json()).toMatchObject({ id, name: 'EU', regions: [{ country: 'DE', state: '' }] });
    const res = await admin(t, 'PATCH', `/shipping-zones/${id}`, {
      regions: [{ country: 'FR' }, { country: 'ES', state: 'Canarias' }],
      methods: [
        { method_id: 'free_shipping', title: 'Free over 50', min_amount: '50' },
        { method_id: 'flat_rate', title: 'Standard', cost: '6' },
      ],
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      id,
      name: 'EU',
      regions: [
        { country: 'FR', state: '' },
        { country: 'ES', state: 'Canarias' },
      ],
      methods: [
        {
          instance_id: 1,
          method_id: 'free_shipping',
          title: 'Free over 50',
          cost: null,
          min_amount: '50.00',
        },
        { instance_id: 2, method_id: 'flat_rate', title: 'Standard', cost: '6.00', min_amount: null },
      ],
    });
    expect(await read()).toEqual(res.json());
    const [event, first] = await history('shipping_zone', id);
    expect(first).toMatchObject({ action: 'update', changes: { name: { before: 'Europe', after: 'EU' } } });
    expect(event!.action).toBe('update');
    expect(Object.keys(event!.changes).sort()).toEqual(['methods', 'regions']);
    expect(event!.changes.regions!.before).toEqual([{ country: 'DE', state: '' }]);
  });

  it('the same values again, or an empty patch, change nothing and record nothing', async () => {
    const events = (await history('shipping_zone', id)).length;
    expect((await admin(t, 'PATCH', `/shipping-zones/${id}`, { name: 'EU' })).statusCode).toBe(200);
    expect((await admin(t, 'PATCH', `/shipping-zones/${id}`, {})).statusCode).toBe(200);
    expect(await history('shipping_zone', id)).toHaveLength(events);
  });

  it('an unknown zone is 404 shipping_zone_not_found; a malformed id is 400', async () => {
    expectError(
      await admin(t, 'PATCH', '/shipping-zones/999999', { name: 'x' }),
      404,
      'shipping_zone_not_found',
    );
    for (const bad of ['abc', '-1', encodeURIComponent(`1${SQL}`)]) {
      expectError(
        await admin(t, 'PATCH', `/shipping-zones/${bad}`, { name: 'x' }),
        400,
        'rest_invalid_param',
      );
    }
  });

  it('bad input is a specific 4xx and changes nothing', async () => {
    const before = await read();
    const events = (await history('shipping_zone', id)).length;
    expectError(await rawJson(`/shipping-zones/${id}`, '{"name":"x",}'), 400, 'rest_invalid_json');
    const cases: [unknown, string][] = [
      [{ name: '' }, 'rest_invalid_param'],
      [{ name: TEN_KB }, 'rest_invalid_param'],
      [{ name: 5 }, 'rest_invalid_param'],
      [{ regions: [] }, 'rest_invalid_param'],
      [{ regions: 'FR' }, 'rest_invalid_param'],
      [{ regions: [{}] }, 'rest_missing_param'],
      [{ regions: [{ country: 'ZZ' }] }, 'invalid_country'],
      [{ regions: [{ country: 'FR' }, { country: 'QQ' }] }, 'invalid_country'],
      [{ regions: [{ country: SQL }] }, 'rest_invalid_param'],
      [{ regions: [{ country: 'FR', postcode: '75001' }] }, 'invalid_parameters'],
      [{ methods: [{ method_id: 'teleport', title: 'x' }] }, 'rest_invalid_param'],
      [{ methods: [{ method_id: 'flat_rate' }] }, 'rest_missing_param'],
      [{ methods: [{ method_id: 'flat_rate', title: 'x', cost: 5 }] }, 'rest_invalid_param'],
      [{ methods: [{ method_id: 'flat_rate', title: 'x', cost: '5.001' }] }, 'invalid_amount'],
      // A valid name with a refused method: nothing of the patch is saved.
      [{ name: 'Half', methods: [{ method_id: 'flat_rate', title: 'x', cost: '5.001' }] }, 'invalid_amount'],
      [{ order: 1 }, 'invalid_parameters'],
      [{ id: 2 }, 'invalid_parameters'],
    ];
    for (const [payload, code] of cases) {
      expectError(await admin(t, 'PATCH', `/shipping-zones/${id}`, payload), 400, code);
    }
    expect(await read()).toEqual(before);
    expect(await history('shipping_zone', id)).toHaveLength(events);
  });

  it('is for administrators only', async () => {
    await expectAdministratorsOnly(`/shipping-zones/${id}`, { name: 'hijacked' }, read);
  });
});
