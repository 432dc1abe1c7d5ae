import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { dialectUnderTest } from '../helpers/db.js';
import { publish, softwareProduct } from '../helpers/factories.js';

// ReleasesService.issuanceCandidates, what package and the update check choose from. On SQLite it
// keeps each product's candidates while the counter that triggers move on every change stands
// (migration 2026112212_release_changes); PostgreSQL has no counter and reads them every time.
// On both, a change by any writer must be seen by the next read.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t?.close());

const db = () => t.app.services.database.db;
const withdraw = (productId: number, versionId: number) =>
  t.app.inject({
    method: 'POST',
    url: `/v1/software/products/${productId}/versions/${versionId}/withdraw`,
    headers: t.adminAuth,
  });

describe('issuance candidates', () => {
  const problems = async (productId: number) =>
    (await t.app.services.releases.issuanceCandidates(productId)).map((c) => [c.release.version, c.problem]);

  it('a change by any writer, through the service or by hand in SQL, is seen by the next read', async () => {
    const product = await softwareProduct(t);
    const first = await publish(t, product.id, '1.0.0');
    expect(await problems(product.id)).toEqual([['1.0.0', null]]);
    // By hand in SQL, as an operator would: no application code is told.
    await db()
      .updateTable('artifacts')
      .set({ state: 'delete_failed' })
      .where('id', '=', first.artifact_id)
      .execute();
    expect(await problems(product.id)).toEqual([['1.0.0', 'artifact_not_available']]);
    await db()
      .updateTable('artifacts')
      .set({ state: 'available' })
      .where('id', '=', first.artifact_id)
      .execute();
    expect(await problems(product.id)).toEqual([['1.0.0', null]]);
    // Through the service: a publication, then a withdrawal.
    const second = await publish(t, product.id, '1.1.0');
    expect(await problems(product.id)).toEqual([
      ['1.1.0', null],
      ['1.0.0', null],
    ]);
    expect((await withdraw(product.id, second.version_id)).statusCode).toBe(200);
    expect(await problems(product.id)).toEqual([['1.0.0', null]]);
  });

  it('are kept while nothing changes on SQLite, and read afresh every time on PostgreSQL', async () => {
    const product = await softwareProduct(t);
    await publish(t, product.id, '1.0.0');
    const releases = t.app.services.releases;
    const first = await releases.issuanceCandidates(product.id);
    const again = await releases.issuanceCandidates(product.id);
    expect(again).toEqual(first);
    if (dialectUnderTest === 'sqlite') expect(again).toBe(first);
    else expect(again).not.toBe(first);
  });

  it.runIf(dialectUnderTest === 'sqlite')(
    'the checks of one turn read the counter once, and that read sees what was committed before any of them asked',
    async () => {
      const product = await softwareProduct(t);
      const release = await publish(t, product.id, '1.0.0');
      const { readBatch, sqlite } = t.app.services.database;
      const releases = t.app.services.releases;
      await releases.issuanceCandidates(product.id);
      // The statements handed to the turn's read batch (RowStatement keeps better-sqlite3's).
      const run = readBatch!.run;
      const counterReads: string[] = [];
      readBatch!.run = function (this: typeof readBatch, statement, ...rest) {
        const source = (statement as unknown as { statement: { source: string } }).statement.source;
        if (source.includes('release_changes')) counterReads.push(source);
        return run.call(this, statement, ...rest);
      } as typeof run;
      try {
        // Five requests of one turn: one read of the counter answers them all.
        const turn = await Promise.all(
          Array.from({ length: 5 }, () => releases.issuanceCandidates(product.id)),
        );
        expect(counterReads).toHaveLength(1);
        expect(turn.every((c) => c === turn[0])).toBe(true);
        // A change committed after the first request asked and before the second did (by hand, on the
        // connection, in the same turn): both are answered by the one read, which runs after both
        // asked, so both see it.
        const before = releases.issuanceCandidates(product.id);
        sqlite!.prepare("update artifacts set state = 'delete_failed' where id = ?").run(release.artifact_id);
        const after = releases.issuanceCandidates(product.id);
        for (const candidates of await Promise.all([before, after])) {
          expect(candidates.map((c) => c.problem)).toEqual(['artifact_not_available']);
        }
        expect(counterReads).toHaveLength(2);
        // Once answered, the read is forgotten: the next request reads the counter again.
        await releases.issuanceCandidates(product.id);
        expect(counterReads).toHaveLength(3);
      } finally {
        readBatch!.run = run;
      }
    },
  );
});
