import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin, createTestApp, expectError, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const SQL = "'; DROP TABLE tax_rates; --";
const TEN_KB = 'x'.repeat(10 * 1024);

const rawJson = (method: 'POST' | 'PATCH', url: string, body: string) =>
  t.app.inject({
    method,
    url: `/v1${url}`,
    headers: { ...t.adminAuth, 'content-type': 'application/json' },
    payload: body,
  });
const list = async (url: string) => (await admin(t, 'GET', url)).json() as unknown[];

describe('tax rates', () => {
  it('creates, lists by priority and deletes', async () => {
    const vat = await admin(t, 'POST', '/tax-rates', { country: 'GB', rate: '20', name: 'VAT' });
    expect(vat.statusCode).toBe(201);
    expect(vat.json()).toEqual({
      id: expect.any(Number),
      country: 'GB',
      state: '',
      postcode: '',
      rate: '20.0000',
      name: 'VAT',
      shipping: true,
      compound: false,
      priority: 1,
    });
    const state = await admin(t, 'POST', '/tax-rates', {
      country: 'US',
      state: 'CA',
      postcode: '90001...90099;94*',
      rate: '7.2500',
      name: 'CA sales tax',
      shipping: false,
      compound: true,
      priority: 2,
    });
    expect(state.json()).toMatchObject({
      state: 'CA',
      postcode: '90001...90099;94*',
      shipping: false,
      compound: true,
    });
    const first = await admin(t, 'POST', '/tax-rates', {
      country: 'DE',
      rate: '0.0001',
      name: 'tiny',
      priority: 0 + 1,
    });
    const ids = ((await list('/tax-rates')) as { id: number; priority: number }[]).map((r) => r.id);
    expect(ids).toEqual([vat.json().id, first.json().id, state.json().id]);
    expect(await t.app.services.catalogue.taxRates.list()).toHaveLength(3);
    expect((await admin(t, 'DELETE', `/tax-rates/${first.json().id}`)).json()).toEqual({ success: true });
    expectError(await admin(t, 'DELETE', `/tax-rates/${first.json().id}`), 404, 'tax_rate_not_found');
    expect(await list('/tax-rates')).toHaveLength(2);
  });

  it('bad input is a specific 4xx and changes nothing', async () => {
    const before = await list('/tax-rates');
    expectError(await rawJson('POST', '/tax-rates', '{"country":"GB"'), 400, 'rest_invalid_json');
    const ok = { country: 'FR', rate: '20', name: 'TVA' };
    const cases: [unknown, string][] = [
      [{}, 'rest_missing_param'],
      [{ country: 'FR', name: 'x' }, 'rest_missing_param'],
      [{ ...ok, country: 'XX' }, 'invalid_country'],
      [{ ...ok, country: 'fr' }, 'invalid_country'],
      [{ ...ok, country: 'FRA' }, 'invalid_country'],
      [{ ...ok, country: SQL }, 'invalid_country'],
      [{ ...ok, country: 33 }, 'invalid_country'],
      [{ ...ok, rate: '100.0001' }, 'invalid_tax_rate'],
      [{ ...ok, rate: '20.00001' }, 'invalid_tax_rate'],
      [{ ...ok, rate: '-1' }, 'invalid_tax_rate'],
      [{ ...ok, rate: 20 }, 'invalid_tax_rate'],
      [{ ...ok, rate: '../20' }, 'invalid_tax_rate'],
      [{ ...ok, name: TEN_KB }, 'rest_invalid_param'],
      [{ ...ok, name: 'x\u007f' }, 'rest_invalid_param'],
      [{ ...ok, state: TEN_KB }, 'rest_invalid_param'],
      [{ ...ok, postcode: '../75001' }, 'rest_invalid_param'],
      [{ ...ok, postcode: SQL }, 'rest_invalid_param'],
      [{ ...ok, shipping: 'yes' }, 'rest_invalid_param'],
      [{ ...ok, priority: 0 }, 'rest_invalid_param'],
      [{ ...ok, class: 'reduced' }, 'invalid_parameters'],
    ];
    for (const [payload, code] of cases)
      expectError(await admin(t, 'POST', '/tax-rates', payload), 400, code);
    for (const id of ['abc', '0', encodeURIComponent(`1${SQL}`)]) {
      expectError(await admin(t, 'DELETE', `/tax-rates/${id}`), 400, 'rest_invalid_param');
    }
    expectError(await admin(t, 'GET', '/tax-rates?country=GB'), 400, 'invalid_parameters');
    expect(await list('/tax-rates')).toEqual(before);
  });
});

describe('shipping zones', () => {
  it('creates with regions and methods, lists and deletes', async () => {
    const res = await admin(t, 'POST', '/shipping-zones', {
      name: 'Europe',
      regions: [{ country: 'DE' }, { country: 'ES', state: 'Canarias' }],
      methods: [
        { method_id: 'flat_rate', title: 'Standard', cost: '4.5' },
        { method_id: 'free_shipping', title: 'Free over 50', min_amount: '50' },
        { method_id: 'local_pickup', title: 'Pick up' },
      ],
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({
      id: expect.any(Number),
      name: 'Europe',
      regions: [
        { country: 'DE', state: '' },
        { country: 'ES', state: 'Canarias' },
      ],
      methods: [
        { instance_id: 1, method_id: 'flat_rate', title: 'Standard', cost: '4.50', min_amount: null },
        {
          instance_id: 2,
          method_id: 'free_shipping',
          title: 'Free over 50',
          cost: null,
          min_amount: '50.00',
        },
        { instance_id: 3, method_id: 'local_pickup', title: 'Pick up', cost: null, min_amount: null },
      ],
    });
    expect(await list('/shipping-zones')).toEqual([res.json()]);
    expect(await t.app.services.catalogue.shipping.list()).toEqual([res.json()]);
    expect((await admin(t, 'DELETE', `/shipping-zones/${res.json().id}`)).json()).toEqual({ success: true });
    expectError(await admin(t, 'DELETE', `/shipping-zones/${res.json().id}`), 404, 'shipping_zone_not_found');
    expect(await list('/shipping-zones')).toEqual([]);
  });

  it('bad input is a specific 4xx and changes nothing', async () => {
    await admin(t, 'POST', '/shipping-zones', { name: 'Keep', regions: [{ country: 'US' }], methods: [] });
    const before = await list('/shipping-zones');
    expectError(await rawJson('POST', '/shipping-zones', '{"name":"x",}'), 400, 'rest_invalid_json');
    const ok = {
      name: 'Zone',
      regions: [{ country: 'FR' }],
      methods: [{ method_id: 'flat_rate', title: 'Std', cost: '5' }],
    };
    const cases: [unknown, string][] = [
      [{}, 'rest_missing_param'],
      [{ name: 'x', regions: [{ country: 'FR' }] }, 'rest_missing_param'],
      [{ ...ok, regions: [] }, 'rest_invalid_param'],
      [{ ...ok, regions: [{}] }, 'rest_missing_param'],
      [{ ...ok, regions: [{ country: 'ZZ' }] }, 'invalid_country'],
      [{ ...ok, regions: [{ country: 'FR' }, { country: 'QQ' }] }, 'invalid_country'],
      [{ ...ok, regions: [{ country: SQL }] }, 'rest_invalid_param'],
      [{ ...ok, regions: [{ country: 'FR', state: 'a\u0000' }] }, 'rest_invalid_param'],
      [{ ...ok, regions: [{ country: 'FR', postcode: '75001' }] }, 'invalid_parameters'],
      [{ ...ok, methods: [{ method_id: 'teleport', title: 'x' }] }, 'rest_invalid_param'],
      [{ ...ok, methods: [{ method_id: 'flat_rate' }] }, 'rest_missing_param'],
      [{ ...ok, methods: [{ method_id: 'flat_rate', title: 'x', cost: 5 }] }, 'rest_invalid_param'],
      [{ ...ok, methods: [{ method_id: 'flat_rate', title: 'x', cost: '5.001' }] }, 'invalid_amount'],
      [{ ...ok, methods: [{ method_id: 'flat_rate', title: 'x', cost: '../5' }] }, 'rest_invalid_param'],
      [{ ...ok, name: TEN_KB }, 'rest_invalid_param'],
      [{ ...ok, name: '' }, 'rest_invalid_param'],
      [{ ...ok, order: 1 }, 'invalid_parameters'],
    ];
    for (const [payload, code] of cases)
      expectError(await admin(t, 'POST', '/shipping-zones', payload), 400, code);
    for (const id of ['abc', '-3', encodeURIComponent('../1')]) {
      expectError(await admin(t, 'DELETE', `/shipping-zones/${id}`), 400, 'rest_invalid_param');
    }
    expectError(
      await admin(t, 'GET', `/shipping-zones?name=${encodeURIComponent(SQL)}`),
      400,
      'invalid_parameters',
    );
    expect(await list('/shipping-zones')).toEqual(before);
  });
});

describe('payment gateways', () => {
  it('lists the built-in gateways: a new store (test mode) has only the test card on, Stripe off until its keys are set', async () => {
    expect(await list('/payment-gateways')).toEqual([
      { id: 'bacs', title: 'Direct bank transfer', enabled: false, currencies: [], instructions: '' },
      { id: 'cheque', title: 'Check payments', enabled: false, currencies: [], instructions: '' },
      { id: 'test_card', title: 'Card (test gateway)', enabled: true, currencies: [], instructions: '' },
      { id: 'stripe', title: 'Card (Stripe)', enabled: false, currencies: [], instructions: '' },
    ]);
  });

  it('switches a gateway and limits its currencies', async () => {
    const res = await admin(t, 'PATCH', '/payment-gateways/cheque', {
      enabled: false,
      currencies: ['EUR', 'USD'],
    });
    expect(res.json()).toEqual({
      id: 'cheque',
      title: 'Check payments',
      enabled: false,
      currencies: ['EUR', 'USD'],
      instructions: '',
    });
    const only = await admin(t, 'PATCH', '/payment-gateways/cheque', {
      enabled: true,
      instructions: 'Cheques payable to Example Ltd',
    });
    expect(only.json()).toMatchObject({ enabled: true, currencies: ['EUR', 'USD'] });
    expect((await admin(t, 'PATCH', '/payment-gateways/cheque', {})).json()).toEqual(only.json());
    expect(await t.app.services.catalogue.gateways.find('cheque')).toEqual(only.json());
    expect(await t.app.services.catalogue.gateways.find('nope')).toBeNull();
  });

  it('keeps payment instructions as text, trimmed, with their line breaks', async () => {
    const text = '  Pay to: Northwind Ltd\nIBAN: DE89 3704 0044 0532 0130 00\n<b>BIC</b>: COBADEFFXXX \n';
    const res = await admin(t, 'PATCH', '/payment-gateways/bacs', { instructions: text });
    expect(res.statusCode).toBe(200);
    expect(res.json().instructions).toBe(text.trim());
    expect((await list('/payment-gateways'))[0]).toMatchObject({ id: 'bacs', instructions: text.trim() });
    const cleared = await admin(t, 'PATCH', '/payment-gateways/bacs', { instructions: '' });
    expect(cleared.json().instructions).toBe('');
  });

  it('bad input is a specific 4xx and changes nothing', async () => {
    const before = await list('/payment-gateways');
    expectError(
      await admin(t, 'PATCH', '/payment-gateways/paypal', { enabled: true }),
      404,
      'gateway_not_found',
    );
    expectError(
      await rawJson('PATCH', '/payment-gateways/bacs', '{"enabled":tru}'),
      400,
      'rest_invalid_json',
    );
    const cases: [unknown, string][] = [
      [{ enabled: 'true' }, 'rest_invalid_param'],
      [{ enabled: 1 }, 'rest_invalid_param'],
      [{ currencies: 'EUR' }, 'rest_invalid_param'],
      [{ currencies: ['eur'] }, 'rest_invalid_param'],
      [{ currencies: ['EUR', 'EUR'] }, 'rest_invalid_param'],
      [{ currencies: [SQL] }, 'rest_invalid_param'],
      [{ currencies: ['ZZZ'] }, 'invalid_currency'],
      [{ instructions: 42 }, 'rest_invalid_param'],
      [{ instructions: ['IBAN'] }, 'rest_invalid_param'],
      [{ instructions: 'x'.repeat(2001) }, 'rest_invalid_param'],
      [{ title: 'Renamed' }, 'invalid_parameters'],
      [{ id: 'cheque' }, 'invalid_parameters'],
    ];
    for (const [payload, code] of cases)
      expectError(await admin(t, 'PATCH', '/payment-gateways/bacs', payload), 400, code);
    for (const id of [encodeURIComponent(SQL), encodeURIComponent('../bacs'), 'BACS', 'x'.repeat(60)]) {
      expectError(
        await admin(t, 'PATCH', `/payment-gateways/${id}`, { enabled: false }),
        400,
        'rest_invalid_param',
      );
    }
    expectError(await admin(t, 'GET', '/payment-gateways?enabled=1'), 400, 'invalid_parameters');
    expect(await list('/payment-gateways')).toEqual(before);
  });
});
