import type { App } from '../../http/types.js';
import { PageQuery } from './catalogue.schemas.js';
import { CouponCreateBody, CouponPatchBody, CouponResponse } from './coupons.schemas.js';
import type { CouponsService } from './coupons.service.js';
import { recordRoutes } from './records.routes.js';

export async function couponsRoutes(app: App, opts: { coupons: CouponsService }) {
  const { coupons } = opts;
  recordRoutes(app, {
    path: '/coupons',
    tags: ['coupons'],
    record: CouponResponse,
    create: {
      summary: 'Create a coupon; the code is stored lower-case and must be unique',
      body: CouponCreateBody,
      conflict: true,
      run: (body, actor) => coupons.create(body, actor),
    },
    list: { summary: 'List coupons, newest first', query: PageQuery, run: (query) => coupons.list(query) },
    get: { summary: 'One coupon', run: (id) => coupons.get(id) },
    update: {
      summary: 'Change any coupon fields (not its usage count)',
      body: CouponPatchBody,
      conflict: true,
      run: (id, body, actor) => coupons.update(id, body, actor),
    },
    delete: { summary: 'Delete a coupon', run: (id, actor) => coupons.delete(id, actor) },
  });
}
