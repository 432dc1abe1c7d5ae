import type { App } from '../../http/types.js';
import { recordRoutes } from './records.routes.js';
import { ShippingZoneBody, ShippingZonePatchBody, ShippingZoneResponse } from './shipping.schemas.js';
import type { ShippingService } from './shipping.service.js';

export async function shippingRoutes(app: App, opts: { shipping: ShippingService }) {
  const { shipping } = opts;
  recordRoutes(app, {
    path: '/shipping-zones',
    tags: ['shipping'],
    record: ShippingZoneResponse,
    create: {
      summary: 'Create a shipping zone with its regions and methods',
      body: ShippingZoneBody,
      run: (body, actor) => shipping.create(body, actor),
    },
    list: { summary: 'Every shipping zone, in creation order', run: () => shipping.list() },
    update: {
      summary: 'Change a shipping zone: its name, or its regions or methods replaced whole',
      body: ShippingZonePatchBody,
      run: (id, body, actor) => shipping.update(id, body, actor),
    },
    delete: { summary: 'Delete a shipping zone', run: (id, actor) => shipping.delete(id, actor) },
  });
}
