import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { MediaRepository } from './media.repository.js';
import { type MediaInUse, MediaService } from './media.service.js';

export type { MediaService } from './media.service.js';

/** Builds the media module: the images of products and the store's logo (docs/storefront.md). */
export function createMedia(deps: { database: Database; clock: Clock; inUse: MediaInUse }): {
  media: MediaService;
} {
  return {
    media: new MediaService(deps.database, new MediaRepository(deps.database.db), deps.clock, deps.inUse),
  };
}
