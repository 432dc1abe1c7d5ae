import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { URL_ONLY_INSTALLATION } from '../../src/modules/identity/identity.js';
import { CsvSource } from '../../src/modules/imports/csv/source.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

// The generic CSV import end to end (docs/migrating.md, 'Importing' and 'The generic CSV format'),
// on the test's database: a dry run, a run, a second run, and what the imported records do.

let t: TestApp;
let dir: string;
const tag = `${process.pid}${Date.now().toString(36)}`;
const slug = (s: string) => `${s}-${tag}`;

beforeAll(async () => {
  t = await createTestApp();
  dir = mkdtempSync(join(tmpdir(), 'tollgate-csv-'));
  const write = (name: string, lines: string[]) =>
    writeFileSync(join(dir, name), `${lines.join('\r\n')}\r\n`);
  // A byte order mark, quoted fields with commas and quotes, CRLF line ends: what spreadsheets write.
  write('customers.csv', [
    '\uFEFFid,email,first_name,last_name,password_hash',
    'c1,ann@example.com,Ann,Lee,$P$BI3f9Bdi.YCSy3YxYzOS0eHO5xVtBT0',
    'c2,bob@example.com,"Bob, ""Jr.""",Smith,',
    'c3,not-an-email,X,Y,',
  ]);
  write('products.csv', [
    'id,name,slug,price,activation_limit',
    `p1,"Pro Plugin",${slug('pro')},49.00,2`,
    `p2,Theme,${slug('theme')},,`,
    'p3,Bad,BAD SLUG,1.00,',
  ]);
  write('variations.csv', [
    'id,product_id,name,price,activation_limit',
    'v1,p2,Single site,29.00,1',
    'v2,p2,Unlimited,99.00,0',
  ]);
  write('licenses.csv', [
    'id,key,product_id,variation_id,customer_id,status,expires_at,activation_limit',
    `l1,KEY-A-${tag},p1,,c1,active,,`,
    `l2,KEY-B-${tag},p2,v1,c2,active,2030-01-01T00:00:00Z,`,
    `l3,KEY-C-${tag},p1,,c1,expired,2020-01-01T00:00:00Z,`,
    `l4,KEY-D-${tag},p1,,c2,disabled,,5`,
    `l5,KEY-E-${tag},p9,,c1,active,,`,
    `l6,KEY-F-${tag},p1,,c3,active,,`,
  ]);
  write('activations.csv', [
    'id,license_id,url,staging',
    'a1,l1,https://ann.example.com,0',
    'a2,l1,https://staging.ann.example.com,1',
    'a3,l2,http://bob.example.org/,',
    'a4,l5,https://x.example.com,',
    'a5,l1,not a url,',
  ]);
});
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

const db = () => t.app.services.database.db;
async function census() {
  const count = async (table: 'users' | 'licenses' | 'activations' | 'products' | 'import_map') =>
    Number(
      (
        await db()
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  return {
    users: await count('users'),
    licenses: await count('licenses'),
    activations: await count('activations'),
    products: await count('products'),
    map: await count('import_map'),
  };
}
const run = (dryRun: boolean) => t.app.services.imports.run(new CsvSource(dir), { dryRun });
const problemsOf = (r: Awaited<ReturnType<typeof run>>) =>
  r.problems.map((p) => `${p.kind}:${p.sourceId}:${p.reason}`).sort();
const PROBLEMS = [
  'activations:a4:unknown_license',
  'activations:a5:invalid_url',
  'customers:c3:invalid_email',
  'licenses:l5:unknown_product',
  'licenses:l6:unknown_customer',
  'products:p3:invalid_slug',
];

describe('CSV import', () => {
  it('a dry run reports what it would make and every row it would leave out, and writes nothing', async () => {
    const before = await census();
    const report = await run(true);
    expect(report.dryRun).toBe(true);
    expect(report.counts.customers).toEqual({ created: 2, present: 0, skipped: 1 });
    expect(report.counts.products).toEqual({ created: 2, present: 0, skipped: 1 });
    expect(report.counts.licenses).toEqual({ created: 4, present: 0, skipped: 2 });
    expect(report.counts.activations).toEqual({ created: 3, present: 0, skipped: 2 });
    expect(problemsOf(report)).toEqual(PROBLEMS);
    expect(report.ok).toBe(true);
    expect(await census()).toEqual(before);
  });

  it('imports, reconciles with the source, and keeps keys, statuses, expiries and sites', async () => {
    const before = await census();
    const report = await run(false);
    expect(report.counts.customers).toEqual({ created: 2, present: 0, skipped: 1 });
    expect(report.counts.licenses).toEqual({ created: 4, present: 0, skipped: 2 });
    expect(report.counts.activations).toEqual({ created: 3, present: 0, skipped: 2 });
    expect(problemsOf(report)).toEqual(PROBLEMS);
    expect(report.reconciliation).toEqual([
      { kind: 'customers', source: 3, imported: 2, skipped: 1, ok: true },
      { kind: 'orders', source: 0, imported: 0, skipped: 0, ok: true },
      { kind: 'subscriptions', source: 0, imported: 0, skipped: 0, ok: true },
      { kind: 'licenses', source: 6, imported: 4, skipped: 2, ok: true },
      { kind: 'activations', source: 5, imported: 3, skipped: 2, ok: true },
    ]);
    const after = await census();
    expect(after.users - before.users).toBe(2);
    expect(after.licenses - before.licenses).toBe(4);
    expect(after.activations - before.activations).toBe(3);
    expect(after.products - before.products).toBe(2);

    const licenses = await db()
      .selectFrom('licenses')
      .selectAll()
      .where('license_key', 'like', `KEY-%-${tag}`)
      .orderBy('license_key')
      .execute();
    expect(licenses.map((l) => [l.license_key, l.status, l.usage_expires_at, l.activation_limit])).toEqual([
      [`KEY-A-${tag}`, 'active', null, null],
      [`KEY-B-${tag}`, 'active', '2030-01-01T00:00:00Z', null],
      [`KEY-C-${tag}`, 'active', '2020-01-01T00:00:00Z', null],
      [`KEY-D-${tag}`, 'suspended', null, 5],
    ]);
    const sites = await db()
      .selectFrom('activations')
      .select(['domain_normalized', 'installation_id', 'environment', 'status'])
      .where(
        'license_id',
        'in',
        licenses.map((l) => l.id),
      )
      .orderBy('domain_normalized')
      .execute();
    expect(sites).toEqual([
      {
        domain_normalized: 'ann.example.com',
        installation_id: URL_ONLY_INSTALLATION,
        environment: 'production',
        status: 'active',
      },
      {
        domain_normalized: 'bob.example.org',
        installation_id: URL_ONLY_INSTALLATION,
        environment: 'production',
        status: 'active',
      },
      {
        domain_normalized: 'staging.ann.example.com',
        installation_id: URL_ONLY_INSTALLATION,
        environment: 'staging',
        status: 'active',
      },
    ]);
    const theme = (await t.app.services.catalogue.findPublishedBySlug(slug('theme')))[0]!;
    expect(theme.variations.map((v) => [v.name, v.price, v.activation_limit])).toEqual([
      ['Single site', '29.00', 1],
      ['Unlimited', '99.00', 0],
    ]);
    const audit = await db()
      .selectFrom('audit_events')
      .select(['action'])
      .where('entity_type', '=', 'import')
      .orderBy('id')
      .execute();
    expect(audit.map((a) => a.action)).toEqual([
      'import_customers',
      'import_products',
      'import_licenses',
      'import_activations',
    ]);
  });

  it('a second run finds everything the first made and makes nothing', async () => {
    const before = await census();
    const report = await run(false);
    expect(report.counts.customers).toEqual({ created: 0, present: 2, skipped: 1 });
    expect(report.counts.products).toEqual({ created: 0, present: 2, skipped: 1 });
    expect(report.counts.licenses).toEqual({ created: 0, present: 4, skipped: 2 });
    expect(report.counts.activations).toEqual({ created: 0, present: 3, skipped: 2 });
    expect(report.ok).toBe(true);
    expect(await census()).toEqual(before);
  });

  it('an imported customer signs in with their WordPress password', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/auth/login',
      payload: { email: 'ann@example.com', password: 'correct horse 1' },
    });
    expect(res.statusCode, res.body).toBe(200);
  });

  it('an imported key answers from its imported site, whose seat it already holds', async () => {
    const pro = (await t.app.services.catalogue.findPublishedBySlug(slug('pro')))[0]!;
    expect(pro.legacy_api).toBe(true);
    const edd = (fields: Record<string, string>) =>
      t.app.inject({
        method: 'POST',
        url: '/',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams(fields).toString(),
      });
    const item = { item_id: String(pro.id), license: `KEY-A-${tag}` };
    const check = await edd({ edd_action: 'check_license', ...item, url: 'https://ann.example.com/' });
    expect(check.json()).toMatchObject({ success: true, license: 'valid', site_count: 1, license_limit: 2 });
    const again = await edd({ edd_action: 'activate_license', ...item, url: 'https://ann.example.com' });
    expect(again.json()).toMatchObject({ success: true, site_count: 1, activations_left: 1 });
    // The expired and the suspended licenses answer as the old store's did.
    const expired = await edd({
      edd_action: 'check_license',
      item_id: String(pro.id),
      license: `KEY-C-${tag}`,
      url: 'https://ann.example.com',
    });
    expect(expired.json()).toMatchObject({ license: 'expired' });
    const disabled = await edd({
      edd_action: 'check_license',
      item_id: String(pro.id),
      license: `KEY-D-${tag}`,
      url: 'https://ann.example.com',
    });
    expect(disabled.json()).toMatchObject({ license: 'disabled' });
  });
});

describe('npm run import', () => {
  // The command on its own store (SQLite in a data directory of its own): the database does not
  // matter to the command's arguments and exit codes, which the tests above do not cover.
  const cli = (args: string[], dataDir: string) =>
    promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/main.ts', 'import', ...args], {
      env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '', PORT: '0', LOG_LEVEL: 'silent' },
      cwd: join(import.meta.dirname, '../..'),
    }).then(
      (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
      (e: { code: number; stdout: string; stderr: string }) => ({
        code: e.code,
        stdout: e.stdout,
        stderr: e.stderr,
      }),
    );

  it('imports with --json, dry-runs, and refuses an unknown source with a usage error', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-import-cli-'));
    try {
      const dry = await cli(['csv', '--dir', dir, '--dry-run', '--json'], dataDir);
      expect(dry.code, dry.stderr).toBe(0);
      expect(JSON.parse(dry.stdout)).toMatchObject({ dryRun: true, ok: true, problemCount: 6 });
      const real = await cli(['csv', '--dir', dir], dataDir);
      expect(real.code, real.stderr).toBe(0);
      expect(real.stdout).toContain('reconciled licenses: source 6 = imported 4 + skipped 2');
      expect((await cli(['nope'], dataDir)).code).toBe(2);
      expect((await cli(['csv'], dataDir)).code).toBe(2);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
