import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { verify } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type BuildOptions, buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import type { App } from '../../src/http/types.js';
import { standardWebhooksSecret } from '../../src/modules/webhooks/signer.js';
import type { WebhookTarget } from '../../src/modules/webhooks/target.js';
import { createWebhooks } from '../../src/modules/webhooks/webhooks.module.js';
import { createTestApp, setSettings, type TestApp } from '../helpers/app.js';
import { freshDatabase } from '../helpers/db.js';
import { sleep, waitFor } from '../helpers/wait.js';
import { type ReceivedRequest, type Receiver, startReceiver } from './helpers.js';

let receiver: Receiver;
beforeEach(async () => {
  receiver = await startReceiver(200);
});
afterEach(async () => receiver.close());

/** An app built with buildApp options (createTestApp takes none). */
async function appWith(opts: BuildOptions): Promise<{ app: App; close(): Promise<void> }> {
  const db = await freshDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-wh-'));
  const config = {
    ...loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', TEST_CLOCK: '1' }),
    database: db.config,
  };
  const app = await buildApp(config, db.database, opts);
  return {
    app,
    async close() {
      await app.close();
      await db.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function deliveredRequest(app: App, licenseId: number): Promise<ReceivedRequest> {
  const id = await app.services.outbox.record('license.revoked', { license_id: licenseId });
  return waitFor(() => receiver.requests.find((r) => r.headers['x-tollgate-event-id'] === id), 'delivery');
}

const standardHeaders = (r: ReceivedRequest) => ({
  'webhook-id': r.headers['webhook-id'] as string,
  'webhook-timestamp': r.headers['webhook-timestamp'] as string,
  'webhook-signature': r.headers['webhook-signature'] as string,
});

describe('the webhookTarget extension function', () => {
  it('overrides url and secret from the settings, and a previous secret co-signs webhook-signature until its time', async () => {
    const seen: WebhookTarget[] = [];
    let until = new Date(Date.now() + 3600_000);
    const { app, close } = await appWith({
      webhookTarget: (fromSettings) => {
        seen.push(fromSettings);
        return {
          url: receiver.url,
          secret: 'vault-secret',
          previous_secret: 'old-vault-secret',
          previous_secret_until: until,
        };
      },
    });
    try {
      app.services.dispatcher.start();
      const req = await deliveredRequest(app, 1);
      expect(seen[0]).toMatchObject({ url: '', secret: '' });
      expect(await verify('vault-secret', req.body, req.headers['x-tollgate-signature'] as string)).toBe(
        true,
      );
      expect(await verify('old-vault-secret', req.body, req.headers['x-tollgate-signature'] as string)).toBe(
        false,
      );
      expect((req.headers['webhook-signature'] as string).split(' ')).toHaveLength(2);
      for (const secret of ['vault-secret', 'old-vault-secret'])
        expect(
          new Webhook(standardWebhooksSecret(secret)).verify(req.body, standardHeaders(req)),
        ).toBeTruthy();

      until = new Date(Date.now() - 1000);
      const after = await deliveredRequest(app, 2);
      expect((after.headers['webhook-signature'] as string).split(' ')).toHaveLength(1);
      expect(() =>
        new Webhook(standardWebhooksSecret('old-vault-secret')).verify(after.body, standardHeaders(after)),
      ).toThrow();
    } finally {
      await close();
    }
  });
});

describe('secret rotation through the settings', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ env: { TEST_CLOCK: '1' } });
  });
  afterEach(async () => t.close());

  it('after webhook_secret changes, X-Tollgate-Signature uses the new secret and webhook-signature carries both for 24 hours', async () => {
    await setSettings(t, { webhook_url: receiver.url, webhook_secret: 'secret-one' });
    t.app.services.dispatcher.start();
    const before = await deliveredRequest(t.app, 1);
    expect((before.headers['webhook-signature'] as string).split(' ')).toHaveLength(1);

    await setSettings(t, { webhook_secret: 'secret-two' });
    const during = await deliveredRequest(t.app, 2);
    expect(await verify('secret-two', during.body, during.headers['x-tollgate-signature'] as string)).toBe(
      true,
    );
    expect(await verify('secret-one', during.body, during.headers['x-tollgate-signature'] as string)).toBe(
      false,
    );
    expect((during.headers['webhook-signature'] as string).split(' ')).toHaveLength(2);
    for (const secret of ['secret-one', 'secret-two'])
      expect(
        new Webhook(standardWebhooksSecret(secret)).verify(during.body, standardHeaders(during)),
      ).toBeTruthy();

    await t.app.services.testClock!.advance(24 * 3600 + 1);
    const after = await deliveredRequest(t.app, 3);
    expect((after.headers['webhook-signature'] as string).split(' ')).toHaveLength(1);
    expect(await verify('secret-two', after.body, after.headers['x-tollgate-signature'] as string)).toBe(
      true,
    );
  });
});

describe('claims', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(async () => t.close());

  it('two dispatchers sharing one database deliver each of 60 events exactly once', async () => {
    receiver.delayMs = 10;
    await setSettings(t, { webhook_url: receiver.url, webhook_secret: 'claim-secret' });
    const { services } = t.app;
    const other = createWebhooks({
      database: services.database,
      settings: services.settings,
      clock: services.clock,
      testClock: null,
      log: t.app.log,
      self: () => ({ origin: services.urls.origin, port: null }),
      validationUrl: () => `${services.urls.base}/licenses/validate`,
      audit: services.audit,
    }).dispatcher;
    const ids: string[] = [];
    for (let i = 1; i <= 60; i++)
      ids.push(await services.outbox.record('license.revoked', { license_id: i }));
    services.dispatcher.start();
    other.start();
    try {
      await waitFor(() => receiver.requests.length >= 60, '60 deliveries', { timeoutMs: 20_000 });
      await sleep(1200);
      const perEvent = new Map<string, number>();
      for (const r of receiver.requests) {
        const id = r.headers['x-tollgate-event-id'] as string;
        perEvent.set(id, (perEvent.get(id) ?? 0) + 1);
      }
      expect(ids.every((id) => perEvent.get(id) === 1)).toBe(true);
      expect(receiver.requests).toHaveLength(60);
    } finally {
      await other.stop();
    }
  });
});
