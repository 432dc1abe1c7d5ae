import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PDFParse } from 'pdf-parse';
import { afterAll, beforeAll } from 'vitest';
import { createTestApp, setSettings, type TestApp } from '../helpers/app.js';

/**
 * A local stand-in for VIES's REST API (`POST /check-vat-number`), answering as VIES does:
 * `{countryCode, vatNumber, requestDate, valid, name, address}`. `valid` lists the numbers it
 * knows (country prefix included); `mode` makes it slow (no answer within the client's timeout),
 * broken (VIES's error body with status 500) or a member state's system down (`valid: false`
 * with `userError: 'MS_UNAVAILABLE'`).
 */
export class ViesStandIn {
  readonly requests: { countryCode: string; vatNumber: string }[] = [];
  mode: 'ok' | 'slow' | 'broken' | 'ms_unavailable' = 'ok';
  private server: Server;
  url = '';

  constructor(readonly valid: Record<string, string>) {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        if (req.method !== 'POST' || req.url !== '/check-vat-number') {
          res.statusCode = 404;
          return res.end();
        }
        const ask = JSON.parse(body) as { countryCode: string; vatNumber: string };
        this.requests.push(ask);
        if (this.mode === 'slow') {
          setTimeout(() => res.end('{}'), 3000).unref();
          return;
        }
        res.setHeader('content-type', 'application/json');
        if (this.mode === 'broken') {
          res.statusCode = 500;
          return res.end(
            JSON.stringify({ actionSucceed: false, errorWrappers: [{ error: 'MS_UNAVAILABLE' }] }),
          );
        }
        if (this.mode === 'ms_unavailable') {
          // A member state's system down: VIES answers 200, valid false, and says why.
          return res.end(
            JSON.stringify({
              ...ask,
              requestDate: new Date().toISOString(),
              valid: false,
              userError: 'MS_UNAVAILABLE',
            }),
          );
        }
        const name = this.valid[`${ask.countryCode}${ask.vatNumber}`];
        res.end(
          JSON.stringify({
            countryCode: ask.countryCode,
            vatNumber: ask.vatNumber,
            requestDate: new Date().toISOString(),
            valid: name !== undefined,
            userError: name !== undefined ? 'VALID' : 'INVALID',
            requestIdentifier: '',
            name: name ?? '---',
            address: name ? '1 Rue de la Paix\n75002 Paris' : '---',
          }),
        );
      });
    });
  }

  async start(): Promise<string> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.url;
  }

  close() {
    this.server.closeAllConnections();
    this.server.close();
  }
}

export async function pdfText(body: Buffer): Promise<string> {
  const parser = new PDFParse({ data: new Uint8Array(body) });
  try {
    return (await parser.getText()).text;
  } finally {
    await parser.destroy();
  }
}

/** An order as the admin API shows its tax (docs/taxes.md). */
export interface TaxedOrderView {
  total: string;
  subtotal: string;
  total_tax: string;
  reverse_charge: boolean;
  buyer_tax_id: string;
  tax_country: string;
  tax_lines: { name: string; rate: string; amount: string }[];
  items: { total: string; total_tax: string }[];
}

/**
 * A German seller's store under `digital_services`, with a VIES stand-in that knows a French
 * business (FR40303265045): started before the file's tests, closed after them. `store.t` is the
 * app once the tests run.
 */
export function useTaxedStore(): { t: TestApp; vies: ViesStandIn } {
  const vies = new ViesStandIn({ FR40303265045: 'ACME SARL' });
  const store = { t: undefined as unknown as TestApp, vies };
  beforeAll(async () => {
    await vies.start();
    store.t = await createTestApp({ env: { VIES_URL: vies.url, VIES_TIMEOUT_MS: '1000' } });
    await setSettings(store.t, {
      checkout_rate_limit: 1000,
      tax_regime: 'digital_services',
      tax_seller_country: 'DE',
    });
  });
  afterAll(async () => {
    vies.close();
    await store.t.close();
  });
  return store;
}
