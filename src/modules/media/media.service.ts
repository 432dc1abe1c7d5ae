import { createHash } from 'node:crypto';
import type { Sharp } from 'sharp';
import { type Clock, iso } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { withTransaction } from '../../db/transaction.js';
import { ApiError } from '../../http/errors.js';
import { SOFTWARE_IMAGES, type SoftwareImageKind } from '../catalogue/catalogue.model.js';
import type { MediaRepository } from './media.repository.js';

/** The largest upload accepted (the multipart limit) and the largest picture decoded. */
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;
const MAX_PIXELS = 40_000_000;
/** The widths every image is served at: a thumbnail (catalogue, cart) and the product page's. */
export const IMAGE_WIDTHS = [400, 1200] as const;
/** Formats an administrator may upload; SVG is refused (a script-capable document, not a picture). */
const ACCEPTED = new Set(['jpeg', 'png', 'webp', 'gif']);

/**
 * A stored file name: the image's hash and a width, or a size of an icon or banner
 * (SOFTWARE_IMAGES); src/pages/store/media.ts serves only these.
 */
export const MEDIA_NAME =
  /^([0-9a-f]{32})-(400|1200|icon-128|icon-256|banner-772x250|banner-1544x500)\.webp$/;
/**
 * An image no product and not the logo uses is deleted once it is this old: an upload is stored
 * before the product or the setting points at it, so a younger file may be about to be used.
 */
export const UNUSED_MEDIA_GRACE_MS = 3_600_000;
const DELETE_BATCH = 200;

/**
 * The image hashes in use: every product's `image`, icon and banner and the `store_logo` setting
 * (src/wiring.ts).
 */
export type MediaInUse = () => Promise<Set<string>>;

/**
 * Product images and the logo: checked, resized to IMAGE_WIDTHS as WebP with every metadata
 * block dropped (sharp keeps none unless asked, so no EXIF location leaves the store), and stored
 * under the hash of the upload. Both files commit in one transaction, so a crash leaves either
 * both or neither; the same upload twice gives the same names.
 */
export class MediaService {
  constructor(
    private readonly database: Pick<Database, 'db'>,
    private readonly repo: MediaRepository,
    private readonly clock: Clock,
    private readonly inUse: MediaInUse,
  ) {}

  /** Stores the image and answers its hash (the `image` of a product, the `store_logo` setting). */
  store(upload: Buffer): Promise<string> {
    return this.storeSizes(
      upload,
      // rotate() applies the EXIF orientation before the metadata is dropped; first frame only.
      IMAGE_WIDTHS.map((width) => ({
        suffix: String(width),
        render: (input: Sharp) => input.rotate().resize({ width, withoutEnlargement: true }),
      })),
    );
  }

  /**
   * Stores a product's icon or banner at the sizes WordPress shows (SOFTWARE_IMAGES), each cut to
   * fill its box (cover, centred), and answers its hash. A smaller upload is enlarged: WordPress
   * draws the box at its size whatever the file's.
   */
  storeSoftwareImage(upload: Buffer, kind: SoftwareImageKind): Promise<string> {
    return this.storeSizes(
      upload,
      SOFTWARE_IMAGES[kind].map(({ suffix, width, height }) => ({
        suffix,
        render: (input: Sharp) => input.rotate().resize({ width, height, fit: 'cover' }),
      })),
    );
  }

  private async storeSizes(
    upload: Buffer,
    sizes: { suffix: string; render: (input: Sharp) => Sharp }[],
  ): Promise<string> {
    // Loaded with the first picture: libvips holds about 25 MB a server that never takes one would
    // carry (docs/performance.md, 'Memory').
    const sharp = (await import('sharp')).default;
    // The header alone first (no decoding), so a picture of too many pixels is refused by its size.
    let format: string | undefined;
    try {
      const meta = await sharp(upload, { limitInputPixels: false }).metadata();
      format = meta.format;
      if ((meta.width ?? 0) * (meta.height ?? 0) > MAX_PIXELS) throw new ApiError('image_too_large');
    } catch (e) {
      if (e instanceof ApiError) throw e;
      throw new ApiError('image_not_supported');
    }
    const input = sharp(upload, { limitInputPixels: MAX_PIXELS, failOn: 'error' });
    if (!format || !ACCEPTED.has(format)) throw new ApiError('image_not_supported');
    const hash = createHash('sha256').update(upload).digest('hex').slice(0, 32);
    let files: { name: string; content_type: string; bytes: Buffer }[];
    try {
      files = await Promise.all(
        sizes.map(async ({ suffix, render }) => ({
          name: `${hash}-${suffix}.webp`,
          content_type: 'image/webp',
          bytes: await render(input.clone()).webp({ quality: 82 }).toBuffer(),
        })),
      );
    } catch {
      // A header that reads as an image over a body that does not decode.
      throw new ApiError('image_not_supported');
    }
    const now = iso(this.clock.now());
    await withTransaction(this.database, (tx) => this.repo.insert(files, now, tx));
    return hash;
  }

  /** A stored file, or null. */
  async file(name: string): Promise<{ content_type: string; bytes: Buffer } | null> {
    if (!MEDIA_NAME.test(name)) return null;
    const row = await this.repo.find(name);
    return row ? { content_type: row.content_type, bytes: Buffer.from(row.bytes) } : null;
  }

  /**
   * Deletes the files of images nothing uses any more (a replaced or removed product image or
   * logo, a deleted product's image), once past the grace period. Run after every change of a
   * product's image or of the logo; answers how many files were deleted.
   */
  async pruneUnused(): Promise<number> {
    const before = iso(new Date(this.clock.now().getTime() - UNUSED_MEDIA_GRACE_MS));
    const [names, used] = await Promise.all([this.repo.namesBefore(before), this.inUse()]);
    const unused = names.filter((name) => !used.has(name.slice(0, 32)));
    let deleted = 0;
    for (let i = 0; i < unused.length; i += DELETE_BATCH) {
      deleted += await this.repo.remove(unused.slice(i, i + DELETE_BATCH));
    }
    return deleted;
  }
}
