import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../http/errors.js';
import type { RenewalService } from '../../modules/orders/license-renewals.service.js';
import type { SettingsService } from '../../modules/settings/settings.service.js';
import { html } from '../html.js';
import { seeOther } from '../layout.js';
import { identityOf, sendStorePage } from './layout.js';

export interface RenewPagesOptions {
  renewals: RenewalService;
  settings: SettingsService;
}

/** What a buyer reads when a renewal link cannot renew, by code (docs/selling.md, 'Renewals'). */
const REFUSALS: Partial<Record<string, [string, string]>> = {
  invalid_renewal_link: [
    'This renewal link is not valid',
    'Copy the whole link from the email or your site, or renew under My licenses.',
  ],
  renewal_link_expired: [
    'This renewal link has expired',
    'Renewal links work until 60 days after the license ends. Renew under My licenses.',
  ],
  license_not_found: ['License not found', 'The license of this link no longer exists.'],
  license_not_renewable: [
    'This license cannot be renewed here',
    'It is revoked, or a subscription renews it. See My licenses.',
  ],
};

/**
 * The one-click renewal link (docs/selling.md, 'Renewals'): `GET /renew?token=…`, signed out,
 * makes (or finds) the pending renewal order of the link's license and period and sends the buyer
 * to its pay page; a license renewed since shows that it is. The token stays out of logs
 * (src/http/redact.ts masks `token=`) and out of Referer headers (the pages send no-referrer).
 */
export async function renewPages(app: FastifyInstance, opts: RenewPagesOptions) {
  app.get('/renew', async (request, reply) => {
    const token = (request.query as Record<string, unknown>).token;
    const store = identityOf(await opts.settings.get());
    try {
      const outcome = await opts.renewals.openLink(typeof token === 'string' ? token : '');
      if (!outcome.renewed) {
        const { order } = outcome;
        const payable = order.status === 'pending' || order.status === 'failed';
        const page = payable ? `/checkout/pay/${order.id}` : `/checkout/order-received/${order.id}`;
        return seeOther(reply, `${page}?key=${encodeURIComponent(order.order_key)}`);
      }
      const body = html`<section class="card narrow" aria-labelledby="renewed-title">
  <h1 id="renewed-title">This license is already renewed</h1>
  <p role="status" data-state="renewed">Your ${outcome.product} license now runs until ${outcome.usage_expires_at.slice(0, 10)}. There is nothing to pay.</p>
  <p><a href="/account/licenses">Go to My licenses</a></p>
</section>`;
      return sendStorePage(reply, 200, store, 'License already renewed', body);
    } catch (e) {
      const refusal = e instanceof ApiError ? REFUSALS[e.code] : undefined;
      if (!refusal) throw e;
      const [title, text] = refusal;
      const err = e as ApiError;
      const body = html`<section class="card narrow">
  <h1>${title}</h1>
  <p class="error" role="alert" data-code="${err.code}">${text}</p>
  <p><a href="/account/licenses">Go to My licenses</a></p>
</section>`;
      return sendStorePage(reply, err.status, store, title, body);
    }
  });
}
