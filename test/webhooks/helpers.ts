import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Kysely } from 'kysely';
import { systemClock } from '../../src/clock.js';
import type { DB } from '../../src/db/schema.js';
import { type EventData, Outbox } from '../../src/modules/webhooks/outbox.js';
import { WebhooksRepository } from '../../src/modules/webhooks/webhooks.repository.js';
import type { WebhookEventName } from '../../src/modules/webhooks/webhooks.tables.js';
import { dialectUnderTest } from '../helpers/db.js';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** Real time the request arrived and (for hung requests) when the sender gave up. */
  at: number;
  closedAt?: number;
}

/** A status (with a short text body), a JSON answer, or no answer at all. */
export type Reply = number | 'hang' | { status: number; json: unknown };

export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  /** What the next requests get: a status code, or no answer at all. */
  reply: Reply | ((req: ReceivedRequest) => Reply);
  delayMs: number;
  close(): Promise<void>;
}

/** A real HTTP receiver on 127.0.0.1 that records every request it gets. */
export async function startReceiver(reply: Receiver['reply'] = 200): Promise<Receiver> {
  const receiver: Receiver = {
    url: '',
    requests: [],
    reply,
    delayMs: 0,
    close: async () => {},
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const record: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      receiver.requests.push(record);
      const r = typeof receiver.reply === 'function' ? receiver.reply(record) : receiver.reply;
      if (r === 'hang') {
        res.on('close', () => {
          record.closedAt = Date.now();
        });
        return;
      }
      setTimeout(() => {
        if (typeof r === 'number') {
          res.statusCode = r;
          res.end(r === 204 ? undefined : 'ok');
        } else {
          res.writeHead(r.status, { 'content-type': 'application/json' }).end(JSON.stringify(r.json));
        }
      }, receiver.delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}

/** Records an event the way another module does, outside any request. */
export function recordEvent<E extends WebhookEventName>(
  db: Kysely<DB>,
  event: E,
  data: EventData[E],
  validationUrl = 'http://store.invalid/v1/licenses/validate',
): Promise<string> {
  const repository = new WebhooksRepository({ db, dialect: dialectUnderTest });
  return new Outbox(repository, systemClock, () => validationUrl).record(event, data);
}

export async function eventRow(db: Kysely<DB>, eventId: string) {
  return db
    .selectFrom('webhook_events')
    .selectAll()
    .where('event_id', '=', eventId)
    .executeTakeFirstOrThrow();
}
