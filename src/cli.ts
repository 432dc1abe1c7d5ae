import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { buildApp } from './app.js';
import { BackupError, backup, restore, type StorePaths } from './backup.js';
import { type Config, ConfigError, loadConfig, resolvePublicUrl } from './config.js';
import { type Database, openDatabase } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { collectStartupGarbage } from './memory.js';
import type { ImportReport } from './modules/imports/imports.service.js';
import type { ImportSource } from './modules/imports/records.js';
import { openSource, SOURCES } from './modules/imports/sources.js';

// The commands, run by src/main.ts once it has checked the Node.js version.

const USAGE = `usage: tollgate [serve|migrate|user:create <email> <password> [administrator|customer]|backup <dir>|restore <dir>|vault:migrate-to-s3|import <csv> [--dry-run] [--json] …]`;

/**
 * `backup <dir>` and `restore <dir>` (docs/backups.md): before the database is opened, so that a
 * restore never creates one and a backup never migrates the database of a running server.
 */
async function backupCommand(command: 'backup' | 'restore', args: string[], config: Config): Promise<number> {
  const [dir] = args;
  if (!dir || args.length !== 1) {
    console.error(USAGE);
    return 2;
  }
  const target = resolve(dir);
  try {
    if (config.database.kind === 'postgres') {
      throw new BackupError(
        'postgres_not_supported',
        command === 'backup'
          ? 'this store runs on PostgreSQL: back it up with pg_dump -Fc, then copy the vault directory (docs/backups.md)'
          : 'this store runs on PostgreSQL: restore its dump with pg_restore and the vault directory beside it (docs/backups.md)',
      );
    }
    const paths: StorePaths = {
      dataDir: config.dataDir,
      databaseFile: config.database.file,
      vaultDir: config.vaultDir,
    };
    if (command === 'backup') {
      const manifest = await backup(paths, target);
      const bytes = manifest.files.reduce((n, f) => n + f.size, 0);
      console.log(
        `backup written to ${target}: the database and ${manifest.files.length - 1} files, ${bytes} bytes (${manifest.created_at})`,
      );
      for (const s of manifest.skipped) console.warn(`warning: ${s.path} left out (${s.reason} on disk)`);
      if (manifest.in_bucket) {
        console.log(
          `${manifest.in_bucket} artifacts live in the S3 bucket and are not in this backup: back the bucket up with its own tools (docs/backups.md)`,
        );
      }
      return 0;
    }
    const result = await restore(paths, target);
    console.log(
      `restored the backup of ${result.manifest.created_at} into ${config.dataDir}: ${result.written} files written, ${result.present} already in place`,
    );
    if (!config.vaultKey && !existsSync(join(config.dataDir, 'vault.key'))) {
      // Signing keys (and encrypted artifacts) are sealed with the vault key, never in a backup.
      console.warn(
        `warning: no vault key: set VAULT_KEY, or put the store's key file at ${join(config.dataDir, 'vault.key')}, before starting the server (docs/backups.md)`,
      );
    }
    return 0;
  } catch (e) {
    if (e instanceof BackupError) {
      console.error(`${command} failed [${e.code}]: ${e.message}`);
      return 1;
    }
    // A file system error (permissions, a full disk): what was written is already removed.
    console.error(`${command} failed: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
}

/**
 * `vault:migrate-to-s3` (docs/operations.md, 'Moving the vault to the bucket'): every vault
 * artifact to the bucket, verified there before its row switches. Exit 1 while any is left behind.
 */
/**
 * `import <source> [--dry-run] [--json] [--<argument> <value>]…` (docs/migrating.md, 'Importing'):
 * reads another store and writes its records into this one, then prints what it made, what it
 * found already made, every row it left out and why, and whether the counts and the revenue per
 * currency reconcile with the source. Exits 0 when they do, 1 when they do not, 2 on a usage error.
 */
async function importCommand(args: string[], config: Config, database: Database): Promise<number> {
  const [name, ...rest] = args;
  const options: Record<string, string> = {};
  let dryRun = false;
  let json = false;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (arg === '--dry-run') dryRun = true;
    else if (arg === '--json') json = true;
    else if (arg.startsWith('--') && rest[i + 1] !== undefined) options[arg.slice(2)] = rest[++i]!;
    else {
      console.error(`import: unexpected argument ${arg}`);
      await database.close();
      return 2;
    }
  }
  let source: ImportSource;
  try {
    source = await openSource(name ?? '', options);
  } catch (e) {
    console.error(
      `import: ${(e as Error).message}\nsources: ${Object.values(SOURCES)
        .map((s) => s.usage)
        .join('; ')}`,
    );
    await database.close();
    return 2;
  }
  const app = await buildApp({ ...config, logLevel: 'silent' }, database);
  try {
    const report = await app.services.imports.run(source, { dryRun });
    if (json) console.log(JSON.stringify(report, null, 2));
    else printImportReport(report);
    return report.ok ? 0 : 1;
  } finally {
    await source.close();
    await app.close();
    await database.close();
  }
}

function printImportReport(report: ImportReport): void {
  console.log(`${report.dryRun ? 'dry run (nothing written)' : 'import'} from ${report.source}`);
  console.log('kind           created  present  skipped');
  for (const [kind, c] of Object.entries(report.counts)) {
    if (c.created + c.present + c.skipped === 0) continue;
    console.log(
      `${kind.padEnd(13)} ${String(c.created).padStart(8)} ${String(c.present).padStart(8)} ${String(c.skipped).padStart(8)}`,
    );
  }
  for (const r of report.reconciliation) {
    console.log(
      `${r.ok ? 'reconciled' : 'MISMATCH  '} ${r.kind}: source ${r.source} = imported ${r.imported} + skipped ${r.skipped}`,
    );
  }
  for (const r of report.revenue) {
    console.log(
      `${r.ok ? 'reconciled' : 'MISMATCH  '} revenue ${r.currency} (minor units): source ${r.source} = imported ${r.imported} + skipped ${r.skipped}`,
    );
  }
  if (report.stripe.customers > 0) {
    console.log(
      `Stripe customers kept: ${report.stripe.customers}, with a card for renewals: ${report.stripe.cards}`,
    );
  }
  const { links } = report;
  if (links.orders + links.subscriptions > 0) {
    console.log(
      `licenses of earlier runs linked now: ${links.orders} to their order, ${links.subscriptions} to their subscription`,
    );
  }
  for (const k of links.kept) {
    console.log(
      `  license ${k.license} stays linked to ${k.kind === 'orders' ? 'order' : 'subscription'} #${k.keptId} (the source names ${k.sourceId})`,
    );
  }
  if (report.oldGateways.length > 0) {
    console.log(
      `${report.oldGateways.length} subscription(s) still billed by their old gateway itself: cancel each there before its next payment, or the customer pays twice:`,
    );
    for (const g of report.oldGateways) {
      console.log(
        `  subscription ${g.subscription}: ${g.gateway || 'gateway'} ${g.profile}, next payment ${g.nextPaymentAt ?? 'not given'}`,
      );
    }
  }
  if (report.problemCount > 0) {
    console.log(`${report.problemCount} row(s) not imported:`);
    for (const p of report.problems)
      console.log(`  ${p.kind} ${p.sourceId}: ${p.reason}${p.detail ? ` (${p.detail})` : ''}`);
  }
}

async function migrateVaultCommand(config: Config, database: Database): Promise<number> {
  if (!config.s3) {
    console.error('vault:migrate-to-s3 needs the bucket: set S3_BUCKET and the other S3_* variables');
    await database.close();
    return 2;
  }
  const app = await buildApp({ ...config, logLevel: 'silent' }, database);
  try {
    const result = await app.services.bucketMigration.run();
    for (const f of result.failed) {
      console.warn(
        `warning: artifact ${f.artifact_id} stays in the vault (${f.reason}); run the command again`,
      );
    }
    console.log(
      `moved ${result.moved.length} artifacts to the bucket ${config.s3.bucket}, ${result.failed.length} left in the vault, ${result.removedLeftovers} leftover vault files removed`,
    );
    return result.failed.length > 0 ? 1 : 0;
  } finally {
    await app.close();
    await database.close();
  }
}

async function main(argv: string[]): Promise<number> {
  const [command = 'serve', ...args] = argv;
  const config = loadConfig();
  if (command === 'backup' || command === 'restore') return backupCommand(command, args, config);
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

  if (command === 'vault:migrate-to-s3') return migrateVaultCommand(config, database);

  if (command === 'import') return importCommand(args, config, database);

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
  // A process whose vault keys cannot open the secrets the store's other processes sealed would
  // fail every signature and every Stripe call: it does not start (docs/operations.md).
  const unopenable = await app.services.unopenableSecrets();
  if (unopenable.length > 0) {
    await app.close();
    await database.close();
    throw new ConfigError(
      `VAULT_KEY${config.vaultKey ? '' : ' (unset: the generated DATA_DIR/vault.key)'} and VAULT_PREVIOUS_KEYS ` +
        `cannot open ${unopenable.length} sealed secret(s) of this store (${unopenable.join(', ')}): ` +
        'start this process with the VAULT_KEY of the processes that sealed them, or add that key to VAULT_PREVIOUS_KEYS',
    );
  }
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
  // Start-up's burst of writes (a new store's migrations and first settings) looks like a busy store
  // and starts the checkpoint worker (src/db/checkpointer.ts); an idle server need not keep its
  // thread for the ten seconds it would wait. Start-up's garbage goes a second after the server is
  // up, once the workers started on listen have made their first pass (src/memory.ts).
  await database.checkpointer?.stop();
  setTimeout(collectStartupGarbage, 1000).unref();
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
