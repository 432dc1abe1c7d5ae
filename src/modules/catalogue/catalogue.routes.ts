import { requireAdmin } from '../../http/auth.js';
import { errors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { actorOf } from '../audit/audit.model.js';
import {
  ProductCreateBody,
  ProductIdParams,
  ProductListQuery,
  ProductPatchBody,
  ProductResponse,
  SoftwareConfigBody,
  SoftwareConfigResponse,
} from './catalogue.schemas.js';
import type { CatalogueService } from './catalogue.service.js';
import { couponsRoutes } from './coupons.routes.js';
import { gatewaysRoutes } from './gateways.routes.js';
import { recordRoutes } from './records.routes.js';
import { shippingRoutes } from './shipping.routes.js';
import { taxRoutes } from './tax.routes.js';

const tags = ['catalogue'];

// Every catalogue route checks the administrator in preValidation, before the body is validated,
// so a caller without the right learns nothing about the shapes it would need.

export async function catalogueRoutes(app: App, opts: { catalogue: CatalogueService }) {
  const { catalogue } = opts;

  recordRoutes(app, {
    path: '/products',
    tags,
    record: ProductResponse,
    create: {
      summary: 'Create a product with its variations',
      body: ProductCreateBody,
      run: (body, actor) => catalogue.createProduct(body, actor),
    },
    list: {
      summary: 'List products, newest first; X-WP-Total and X-WP-TotalPages carry the totals',
      query: ProductListQuery,
      run: (query) => catalogue.listProducts(query),
    },
    get: { summary: 'One product with its variations', run: (id) => catalogue.requireProduct(id) },
    update: {
      summary: 'Change product fields; `variations`, when sent, is the complete new list',
      body: ProductPatchBody,
      conflict: true,
      run: (id, body, actor) => catalogue.updateProduct(id, body, actor),
    },
  });

  app.get(
    '/software/products/:product_id/config',
    {
      preValidation: requireAdmin,
      schema: {
        tags,
        summary: "A product's software configuration",
        params: ProductIdParams,
        response: { 200: SoftwareConfigResponse, ...errors(400, 401, 403, 404) },
      },
    },
    (request) => catalogue.getSoftwareConfig(request.params.product_id),
  );

  app.post(
    '/software/products/:product_id/config',
    {
      preValidation: requireAdmin,
      config: {
        validationCodes: {
          invalid: { slug: 'invalid_slug', filename_template: 'invalid_filename_template' },
        },
      },
      schema: {
        tags,
        summary: 'Update slug, filename template, storage driver, licensing and software-enabled policy',
        params: ProductIdParams,
        body: SoftwareConfigBody,
        response: { 200: SoftwareConfigResponse, ...errors(400, 401, 403, 404, 409) },
      },
    },
    (request) => catalogue.updateSoftwareConfig(request.params.product_id, request.body, actorOf(request)),
  );

  await couponsRoutes(app, { coupons: catalogue.coupons });
  await taxRoutes(app, { tax: catalogue.taxRates });
  await shippingRoutes(app, { shipping: catalogue.shipping });
  await gatewaysRoutes(app, { gateways: catalogue.gateways });
}
