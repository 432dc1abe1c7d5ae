import type { App } from '../../http/types.js';
import { GatewayParams, GatewayPatchBody, GatewayResponse } from './gateways.schemas.js';
import type { GatewaysService } from './gateways.service.js';
import { recordRoutes } from './records.routes.js';

export async function gatewaysRoutes(app: App, opts: { gateways: GatewaysService }) {
  const { gateways } = opts;
  recordRoutes(app, {
    path: '/payment-gateways',
    tags: ['gateways'],
    record: GatewayResponse,
    params: GatewayParams,
    list: { summary: 'The built-in payment gateways', run: () => gateways.list() },
    update: {
      summary:
        'Switch a gateway on or off, limit its currencies (empty list = all), set its payment instructions',
      body: GatewayPatchBody,
      run: (id, body, actor) => gateways.update(id, body, actor),
    },
  });
}
