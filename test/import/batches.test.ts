import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CsvSource } from '../../src/modules/imports/csv/source.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

// Licenses and activations are written a batch to a transaction (docs/performance.md, 'Importing
// another store'): a record that cannot be written costs only itself, and a source id seen twice
// is written once, as a run of one transaction per record would.

let t: TestApp;
let dir: string;
const tag = `${process.pid}${Date.now().toString(36)}`;
const N = 250; // more than two batches

const write = (name: string, lines: string[]) => writeFileSync(join(dir, name), `${lines.join('\r\n')}\r\n`);
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

beforeAll(async () => {
  t = await createTestApp();
  dir = mkdtempSync(join(tmpdir(), 'tollgate-batches-'));
  write('customers.csv', ['id,email', ...range(N).map((i) => `c${i},b${i}-${tag}@example.com`)]);
  write('products.csv', ['id,name,slug,price', `p1,Batched,batched-${tag},9.00`]);
  const licenses = [
    'id,key,product_id,customer_id,status',
    ...range(N).map((i) => `l${i},BATCH-${i}-${tag},p1,c${i},active`),
  ];
  // The same source id again, in the same batch, with another key: the first one stands.
  licenses.splice(9, 0, `l7,BATCH-AGAIN-${tag},p1,c7,active`);
  write('licenses.csv', licenses);
});
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

const db = () => t.app.services.database.db;

describe('batched writes', () => {
  it('a source id seen twice in one batch is written once', async () => {
    const report = await t.app.services.imports.run(new CsvSource(dir), { dryRun: false });
    expect(report.counts.licenses).toEqual({ created: N, present: 1, skipped: 0 });
    const again = await db()
      .selectFrom('licenses')
      .select('id')
      .where('license_key', '=', `BATCH-AGAIN-${tag}`)
      .execute();
    expect(again).toEqual([]);
  });

  it('an activation that cannot be written is reported alone; the rest of its batch is written', async () => {
    // License l5 disappears after its import: its sites can no longer be written (foreign key).
    const l5 = await db()
      .selectFrom('import_map')
      .select('target_id')
      .where('source', '=', 'csv')
      .where('kind', '=', 'licenses')
      .where('source_id', '=', 'l5')
      .executeTakeFirstOrThrow();
    await db().deleteFrom('licenses').where('id', '=', l5.target_id).execute();
    write('activations.csv', [
      'id,license_id,url',
      ...range(N).map((i) => `a${i},l${i},https://site${i}-${tag}.example.com`),
    ]);
    const report = await t.app.services.imports.run(new CsvSource(dir), { dryRun: false });
    expect(report.counts.activations).toEqual({ created: N - 1, present: 0, skipped: 1 });
    expect(report.problems).toEqual([{ kind: 'activations', sourceId: 'a5', reason: 'write_failed' }]);
    const sites = await db()
      .selectFrom('activations')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('domain', 'like', `%-${tag}.example.com`)
      .executeTakeFirstOrThrow();
    expect(Number(sites.n)).toBe(N - 1);
    // A second run makes nothing twice.
    const rerun = await t.app.services.imports.run(new CsvSource(dir), { dryRun: false });
    expect(rerun.counts.activations).toEqual({ created: 0, present: N - 1, skipped: 1 });
  });
});
