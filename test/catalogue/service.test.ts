import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  isPublicProduct,
  isSoftwareEnabled,
  resolveActivationLimit,
} from '../../src/modules/catalogue/catalogue.model.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createProduct } from '../helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const catalogue = () => t.app.services.catalogue;

describe('CatalogueService reads for other modules', () => {
  it('getProduct answers the typed product with variations, or null', async () => {
    const p = await createProduct(t, {
      type: 'variable',
      activation_limit: 4,
      variations: [
        { name: 'One', price: '10', activation_limit: 1, attributes: { Sites: '1' } },
        { name: 'Inherit', price: '20', activation_limit: '' },
      ],
    });
    const product = await catalogue().getProduct(p.id);
    expect(product).toMatchObject({
      id: p.id,
      type: 'variable',
      price_minor: 4900,
      activation_limit: 4,
      software_enabled: 'no',
      licensing_enabled: 'yes',
    });
    expect(product!.variations.map((v) => [v.name, v.price_minor, v.activation_limit, v.product_id])).toEqual(
      [
        ['One', 1000, 1, p.id],
        ['Inherit', 2000, null, p.id],
      ],
    );
    expect(await catalogue().getProduct(999999)).toBeNull();
  });

  it('getVariation answers one variation with its product id, or null', async () => {
    const p = await createProduct(t, { type: 'variable', variations: [{ name: 'V', price: '1.5' }] });
    const v = await catalogue().getVariation(p.variations[0]!.id);
    expect(v).toMatchObject({ id: p.variations[0]!.id, product_id: p.id, price: '1.50', price_minor: 150 });
    expect(await catalogue().getVariation(999999)).toBeNull();
  });

  it('findPublishedBySlug returns published products only, all of them', async () => {
    const published = await createProduct(t, {}, { software: { slug: 'lookup', software_enabled: 'yes' } });
    await createProduct(t, { status: 'draft' }, { software: { slug: 'lookup' } });
    expect((await catalogue().findPublishedBySlug('lookup')).map((p) => p.id)).toEqual([published.id]);
    expect(await catalogue().findPublishedBySlug('nothing-here')).toEqual([]);
  });

  it('activation limit resolution: variation, then product, then global default; 0 stays unlimited', () => {
    expect(resolveActivationLimit({ activation_limit: 5 }, { activation_limit: 2 }, 1)).toBe(2);
    expect(resolveActivationLimit({ activation_limit: 5 }, { activation_limit: 0 }, 1)).toBe(0);
    expect(resolveActivationLimit({ activation_limit: 5 }, { activation_limit: null }, 1)).toBe(5);
    expect(resolveActivationLimit({ activation_limit: 0 }, null, 3)).toBe(0);
    expect(resolveActivationLimit({ activation_limit: null }, { activation_limit: null }, 3)).toBe(3);
  });

  it('classification is fail-closed: public only for exactly "no", distribution only for "yes"', () => {
    expect(isPublicProduct({ licensing_enabled: 'no' })).toBe(true);
    for (const v of ['No', 'yes', '', 'false', null])
      expect(isPublicProduct({ licensing_enabled: v })).toBe(false);
    expect(isSoftwareEnabled({ software_enabled: 'yes' })).toBe(true);
    expect(isSoftwareEnabled({ software_enabled: 'no' })).toBe(false);
  });
});
