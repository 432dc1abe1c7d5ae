import { sha256 } from '../../src/random.js';
import type { TestApp } from '../helpers/app.js';
import { stagingFiles, vaultFiles } from '../helpers/vault.js';

export const hashOf = (b: Buffer) => sha256(b);

/** Lists a product's releases as the administrator. */
export async function versions(t: TestApp, productId: number) {
  const res = await t.app.inject({
    method: 'GET',
    url: `/v1/software/products/${productId}/versions`,
    headers: t.adminAuth,
  });
  if (res.statusCode !== 200) throw new Error(`list failed: ${res.statusCode} ${res.body}`);
  return res.json() as {
    releases: { version_id: number; status: string; is_current: boolean; version: string }[];
  };
}

/** Snapshot of everything an upload could change: releases, artifacts, vault and staging files. */
export async function snapshot(t: TestApp) {
  const db = t.app.services.database.db;
  const releases = await db.selectFrom('releases').selectAll().orderBy('id').execute();
  const artifacts = await db.selectFrom('artifacts').selectAll().orderBy('id').execute();
  return {
    releases,
    artifacts,
    vault: vaultFiles(t.config.vaultDir),
    staging: stagingFiles(t.config.vaultDir),
  };
}
