#!/usr/bin/env node
/**
 * Runs the reference webhook receiver:
 *   node --import tsx examples/webhook-receiver/main.ts examples/webhook-receiver/config.example.json
 * Licenses are mapped with:
 *   node --import tsx examples/webhook-receiver/main.ts <config> map <store> <license_id> <license_key> <domain> <installation_id> [subscription_id]
 */
import { loadConfig } from './config.js';
import { createReceiver } from './receiver.js';
import { ReceiverStore } from './store.js';

const [configFile, command, ...args] = process.argv.slice(2);
if (!configFile) {
  console.error(
    'usage: main.ts <config.json> [map <store> <license_id> <license_key> <domain> <installation_id> [subscription_id]]',
  );
  process.exit(2);
}
const config = loadConfig(configFile);

if (command === 'map') {
  const [store, licenseId, licenseKey, domain, installationId, subscriptionId] = args;
  if (!store || !licenseId || !licenseKey || !domain || !installationId) {
    console.error(
      'map needs: <store> <license_id> <license_key> <domain> <installation_id> [subscription_id]',
    );
    process.exit(2);
  }
  const db = new ReceiverStore(config.database);
  db.upsertLicense({
    store,
    license_id: Number(licenseId),
    subscription_id: subscriptionId ? Number(subscriptionId) : null,
    license_key: licenseKey,
    domain,
    installation_id: installationId,
  });
  db.close();
  console.log(`mapped license ${licenseId} of ${store}`);
} else {
  const receiver = createReceiver(config);
  const url = await receiver.listen();
  console.log(`receiver listening on ${url}/webhooks/<store>`);
  const stop = async () => {
    await receiver.close();
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
