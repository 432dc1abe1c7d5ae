import { stat } from 'node:fs/promises';
import type { Database } from '../../db/database.js';
import { withTransaction } from '../../db/transaction.js';
import type { PublishingService } from '../releases/publishing.service.js';
import type { ImportMap } from './import-map.js';
import { ImportRefusal, idOf, type Outcome, type Run } from './import-run.js';
import type { ImportRelease } from './records.js';

/** The importer's releases (docs/migrating.md, 'Importing'): published from their zip when it is at hand. */
export class ReleasesImport {
  constructor(
    private readonly database: Pick<Database, 'db'>,
    private readonly map: ImportMap,
    private readonly publishing: Pick<PublishingService, 'createFromFile'>,
    /** The largest release zip an upload takes (MAX_UPLOAD_BYTES). */
    private readonly maxUploadBytes: number,
  ) {}

  /**
   * A release needs its zip here (every download is a checked upload, docs/releases.md): one the
   * old store knew only by its version and changelog is reported `no_file`, for the owner to
   * upload. One with its zip at hand is published from it as an upload of that zip would be, its
   * refusals (`invalid_archive`, `release_version_mismatch`, …) reported as the row's reason.
   */
  async release(run: Run, r: ImportRelease): Promise<Outcome> {
    const sourceId = idOf('releases', r);
    const known = await this.map.found(run, 'releases', sourceId);
    if (known !== undefined) return 'present';
    const productId = await this.map.target(run, 'products', r.productSourceId, 'unknown_product');
    if (!r.filePath) throw new ImportRefusal('no_file');
    const file = await stat(r.filePath).catch(() => null);
    if (!file?.isFile()) throw new ImportRefusal('file_unreadable');
    if (run.dryRun) {
      run.plan('releases', sourceId);
      return 'created';
    }
    const made = await this.publishing.createFromFile(
      productId,
      r.filePath,
      { version: r.version, ...(r.changelog ? { changelog: r.changelog } : {}) },
      this.maxUploadBytes,
    );
    await withTransaction(this.database, (tx) => this.map.remember(run, 'releases', sourceId, made.id, tx));
    return made.created ? 'created' : 'present';
  }
}
