import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for a customer's website running the vendor's plugin: it asks the store to activate,
 * sends the browser to the approval page, and exchanges the token on its callback. It listens on
 * 127.0.0.1; the browser reaches it by the name `host` (mapped to 127.0.0.1 in the browser).
 */
export interface CustomerSite {
  origin: string;
  installationId: string;
  /** What the callback received (Referer must be absent: the store sends no-referrer). */
  callbacks: { query: URLSearchParams; referer: string | undefined; result: unknown }[];
  close(): Promise<void>;
}

const page = (title: string, body: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1>${body}</body></html>`;

export async function startCustomerSite(opts: {
  host: string;
  store: string;
  licenseKey: string;
  installationId: string;
}): Promise<CustomerSite> {
  const callbacks: CustomerSite['callbacks'] = [];
  let origin = '';
  /** The pending request's state, remembered from redirect_url to recognise our own callback. */
  let pendingState: string | null = null;

  const activate = async (extra: Record<string, string>) => {
    const res = await fetch(`${opts.store}/v1/licenses/activate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'StandInPlugin/1.0' },
      body: JSON.stringify({
        license_key: opts.licenseKey,
        domain: origin,
        installation_id: opts.installationId,
        ...extra,
      }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', origin);
    const send = (status: number, html: string) => {
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
      res.end(html);
    };
    if (url.pathname === '/activate') {
      const result = await activate({ return_url: `${origin}/callback?plugin=forms-pro` });
      if (result.body.code === 'oauth_required') {
        pendingState = new URL(result.body.redirect_url as string).searchParams.get('state');
        res.writeHead(303, { location: result.body.redirect_url as string });
        return res.end();
      }
      return send(200, page('Activation answer', `<pre id="result">${JSON.stringify(result.body)}</pre>`));
    }
    if (url.pathname === '/callback') {
      const entry = { query: url.searchParams, referer: req.headers.referer, result: null as unknown };
      callbacks.push(entry);
      if (!pendingState || url.searchParams.get('state') !== pendingState) {
        return send(400, page('Unexpected callback', '<p id="result">not our request</p>'));
      }
      if (url.searchParams.get('error') === 'access_denied') {
        return send(200, page('Activation denied', '<p id="result">denied</p>'));
      }
      const token = url.searchParams.get('activation_token') ?? '';
      const result = await activate({ activation_token: token });
      entry.result = result;
      pendingState = null;
      return result.status === 200
        ? send(200, page('License activated', `<p id="result">activated ${result.body.activation_id}</p>`))
        : send(200, page('Activation failed', `<p id="result">${String(result.body.code)}</p>`));
    }
    send(404, page('Not found', ''));
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((e) => {
      res.writeHead(500);
      res.end(String(e));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://${opts.host}:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    installationId: opts.installationId,
    callbacks,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
