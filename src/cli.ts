import { chmodSync, mkdirSync } from 'node:fs';
import { buildApp } from './app.js';
import { ConfigError, loadConfig, resolvePublicUrl } from './config.js';
import { openDatabase } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';

// The commands, run by src/main.ts once it has checked the Node.js version.

const USAGE = `usage: tollgate [serve|migrate|user:create <email> <password> [administrator|customer]]`;

async function main(argv: string[]): Promise<number> {
  const [command = 'serve', ...args] = argv;
  const config = loadConfig();
  // The data directory holds the database, the vault and generated keys: the owner's only.
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  chmodSync(config.dataDir, 0o700);
  const database = openDatabase(config.database);
  try {
    await migrateToLatest(database.db, database.dialect);
  } catch (e) {
    await database.close();
    throw e;
  }

  if (command === 'migrate') {
    // The data step that needs the vault runs right after the schema ones (docs/releases.md,
    // 'Signatures and Content-MD5'): artifacts stored before releases were signed are signed.
    const app = await buildApp(config, database);
    try {
      await app.services.releaseSignatures.signUnsigned(app.log);
    } finally {
      await app.close();
      await database.close();
    }
    console.log('migrations complete');
    return 0;
  }

  if (command === 'user:create') {
    const [email, password, role = 'administrator'] = args;
    if (!email || !password || (role !== 'administrator' && role !== 'customer')) {
      console.error(USAGE);
      await database.close();
      return 2;
    }
    const app = await buildApp({ ...config, logLevel: 'silent' }, database);
    const user =
      role === 'administrator'
        ? await app.services.accounts.ensureAdministrator(email, password)
        : await app.services.accounts.createUser({ email, password, role });
    console.log(`user ${user.email} (${user.role}) id ${user.id}`);
    await app.close();
    await database.close();
    return 0;
  }

  if (command !== 'serve') {
    console.error(USAGE);
    await database.close();
    return 2;
  }

  const app = await buildApp(config, database);
  // As after `migrate`: a server started on a store upgraded without it signs the artifacts
  // stored before releases were signed, before it answers (docs/releases.md).
  await app.services.releaseSignatures.signUnsigned(app.log);
  if (config.adminEmail && config.adminPassword) {
    await app.services.accounts.ensureAdministrator(config.adminEmail, config.adminPassword);
  }
  await app.listen({ port: config.port, host: config.host });
  // The metrics listener opened with the server (an onListen hook): a port that cannot be opened
  // stops the start here, rather than only being logged.
  const metricsPort = app.metrics ? await app.metrics.listen() : null;
  if (!(await app.services.accounts.hasAdministrator())) {
    console.log(
      'no administrator yet: restart with ADMIN_EMAIL and ADMIN_PASSWORD set, or run `npm run user:create -- <email> <password>`',
    );
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  app.services.urls.origin = resolvePublicUrl(config, port);
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  // The handlers are in place before the line that says the server is up: a signal sent as soon
  // as it is read stops the server like any other, rather than killing it.
  const stopped = new Promise<void>((resolve) => {
    let stopping = false;
    const stop = async () => {
      if (stopping) return;
      stopping = true;
      // Stop accepting, let in-flight requests finish, then release the database. A request
      // still running after 10 seconds is cut off rather than holding the exit forever.
      const force = setTimeout(() => app.server.closeAllConnections(), 10_000);
      force.unref();
      await app.close();
      await database.close();
      resolve();
    };
    // Repeated signals while stopping are ignored; the 10-second cut-off bounds the wait.
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
  if (metricsPort !== null) console.log(`metrics on http://${host}:${metricsPort}/metrics`);
  console.log(`listening on http://${host}:${port}`);
  await stopped;
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    if (err instanceof ConfigError) console.error(`configuration error: ${err.message}`);
    else console.error(`tollgate failed to start: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
