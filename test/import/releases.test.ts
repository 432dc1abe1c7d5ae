import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { pluginZip } from '../helpers/zip.js';
import { type Records, recordsSource } from './records.js';

// Releases imported (docs/migrating.md, 'Importing'): metadata alone is reported `no_file`; a zip
// at hand is published as its upload would be, refused for what an upload is refused for.

let t: TestApp;
let dir: string;
const tag = `${process.pid}${Date.now().toString(36)}`;
const slug = `rel-${tag}`;
let good: Buffer;
beforeAll(async () => {
  t = await createTestApp();
  dir = mkdtempSync(join(tmpdir(), 'tollgate-releases-'));
  good = pluginZip('2.0.0', slug);
  writeFileSync(join(dir, 'good.zip'), good);
  writeFileSync(join(dir, 'other-version.zip'), pluginZip('2.5.0', slug));
  writeFileSync(join(dir, 'not-a-zip.zip'), 'this is not a zip archive at all');
});
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

const records = (): Records => ({
  products: [{ sourceId: 'p1', name: 'Rel', slug, price: 1000, variations: [] }],
  releases: [
    { productSourceId: 'p1', version: '1.0.0', changelog: 'First.' },
    { productSourceId: 'p1', version: '2.0.0', changelog: 'Second.', filePath: join(dir, 'good.zip') },
    { productSourceId: 'p1', version: '3.0.0', filePath: join(dir, 'other-version.zip') },
    { productSourceId: 'p1', version: '4.0.0', filePath: join(dir, 'not-a-zip.zip') },
    { productSourceId: 'p1', version: '5.0.0', filePath: join(dir, 'missing.zip') },
    { productSourceId: 'p9', version: '1.0.0', filePath: join(dir, 'good.zip') },
  ],
});
const run = (dryRun: boolean) => t.app.services.imports.run(recordsSource('edd', records()), { dryRun });
const problemsOf = (r: Awaited<ReturnType<typeof run>>) =>
  r.problems.map((p) => `${p.sourceId}:${p.reason}`).sort();
const releases = () =>
  t.app.services.database.db.selectFrom('releases').select(['version', 'changelog', 'file_sha256']).execute();

it('a dry run checks the files are there, and writes nothing', async () => {
  const report = await run(true);
  // Whether a zip is a good release is known only when it is read, by a real run.
  expect(report.counts.releases).toEqual({ created: 3, present: 0, skipped: 3 });
  expect(problemsOf(report)).toEqual([
    'p1@1.0.0:no_file',
    'p1@5.0.0:file_unreadable',
    'p9@1.0.0:unknown_product',
  ]);
  expect(await releases()).toEqual([]);
});

it('publishes a zip as its upload would be, and reports the rest', async () => {
  const report = await run(false);
  expect(report.counts.releases).toEqual({ created: 1, present: 0, skipped: 5 });
  expect(problemsOf(report)).toEqual([
    'p1@1.0.0:no_file',
    'p1@3.0.0:release_version_mismatch',
    'p1@4.0.0:invalid_archive',
    'p1@5.0.0:file_unreadable',
    'p9@1.0.0:unknown_product',
  ]);
  const made = await releases();
  expect(made).toHaveLength(1);
  expect(made[0]).toMatchObject({
    version: '2.0.0',
    file_sha256: createHash('sha256').update(good).digest('hex'),
  });
  expect(made[0]!.changelog).toContain('Second.');
});

it('a second run makes nothing', async () => {
  const report = await run(false);
  expect(report.counts.releases).toEqual({ created: 0, present: 1, skipped: 5 });
  expect(await releases()).toHaveLength(1);
});
