import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { ReceiverConfig } from './config.js';
import { Revalidator } from './revalidator.js';
import { verifySignature } from './signature.js';
import { ReceiverStore } from './store.js';

const MAX_BODY = 256 * 1024;
const EVENTS = new Set([
  'license.renewed',
  'license.revoked',
  'subscription.status_changed',
  // Sent only by a store with stale_activation_days set; revalidated by license_id like the others.
  'activation.stale_deactivated',
  // A license moved to another customer's account; revalidated by license_id like the others.
  'license.transferred',
]);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export interface Receiver {
  server: Server;
  store: ReceiverStore;
  revalidator: Revalidator;
  /** Listens on the configured host and port (0 = any free port); resolves to the base URL. */
  listen(): Promise<string>;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body?: Record<string, unknown>): void {
  if (body === undefined) {
    res.writeHead(status).end();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function readBody(req: IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        resolve(null);
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/**
 * The reference receiver of docs/webhooks.md, 'What a receiver must do':
 * POST /webhooks/<store scope>.
 */
export function createReceiver(config: ReceiverConfig): Receiver {
  const store = new ReceiverStore(config.database, { busyTimeoutMs: config.busy_timeout_ms });
  const revalidator = new Revalidator(store, config);

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://receiver').pathname;
    const m = /^\/webhooks\/([^/]+)$/.exec(path);
    if (!m) return send(res, 404, { error: 'not_found' });
    if (req.method !== 'POST') return send(res, 405, { error: 'method_not_allowed' });
    // 1. The trusted store scope and its secrets; an unknown scope is refused.
    const scope = decodeURIComponent(m[1]!);
    const trusted = Object.hasOwn(config.stores, scope) ? config.stores[scope] : undefined;
    if (!trusted) return send(res, 401, { error: 'unknown_store' });
    const raw = await readBody(req);
    if (raw === null) return send(res, 413, { error: 'payload_too_large' });
    // 2. Signature over the exact raw bytes, before anything is parsed.
    const signature = req.headers['x-tollgate-signature'];
    if (!verifySignature(raw, typeof signature === 'string' ? signature : undefined, trusted.secrets))
      return send(res, 401, { error: 'invalid_signature' });
    // 3. The event id comes from the signed body; the unsigned header, when sent, must agree.
    let envelope: { event_id?: unknown; event?: unknown; data?: unknown };
    try {
      envelope = JSON.parse(raw.toString('utf8'));
    } catch {
      return send(res, 400, { error: 'invalid_payload' });
    }
    const eventId = envelope?.event_id;
    if (
      typeof eventId !== 'string' ||
      !UUID.test(eventId) ||
      typeof envelope.event !== 'string' ||
      !EVENTS.has(envelope.event) ||
      typeof envelope.data !== 'object' ||
      envelope.data === null
    )
      return send(res, 400, { error: 'invalid_payload' });
    const headerId = req.headers['x-tollgate-event-id'];
    if (headerId !== undefined && headerId !== eventId) return send(res, 400, { error: 'event_id_mismatch' });
    // 4. Deduplicate and persist, committed before answering; a failed commit makes the sender retry.
    let fresh: boolean;
    try {
      fresh = store.acceptEvent(scope, eventId, envelope.event, raw.toString('utf8'));
    } catch (err) {
      console.error('could not store webhook:', err instanceof Error ? err.message : err);
      return send(res, 500, { error: 'storage_failed' });
    }
    if (!fresh) return send(res, 200, { status: 'duplicate' });
    // 5. Revalidation happens after the answer, in the worker.
    setImmediate(() => revalidator.kick());
    return send(res, 204);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      console.error('webhook handler failed:', err);
      if (!res.headersSent) send(res, 500, { error: 'internal_error' });
    });
  });

  return {
    server,
    store,
    revalidator,
    listen: () =>
      new Promise((resolve) => {
        server.listen(config.port, config.host, () => {
          const address = server.address();
          const port = typeof address === 'object' && address ? address.port : config.port;
          revalidator.start();
          resolve(`http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`);
        });
      }),
    close: async () => {
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      await revalidator.stop();
      store.close();
    },
  };
}
