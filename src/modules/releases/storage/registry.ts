import { ApiError } from '../../../http/errors.js';
import type { StorageDriver } from './driver.js';

/** Driver names a storage key or a request may carry: short identifiers only. */
export const DRIVER_NAME = /^[a-z][a-z0-9_]{0,39}$/;

/** The drivers this server knows, by name; an extension registers more (tests register fakes). */
export class StorageRegistry {
  private readonly drivers = new Map<string, StorageDriver>();

  register(driver: StorageDriver): void {
    if (!DRIVER_NAME.test(driver.name)) throw new Error(`invalid storage driver name ${driver.name}`);
    this.drivers.set(driver.name, driver);
  }

  /** The driver, or 501 `unsupported_storage_driver`. */
  get(name: string): StorageDriver {
    const driver = this.drivers.get(name);
    if (!driver) throw new ApiError('unsupported_storage_driver', { data: { storage_driver: name } });
    return driver;
  }

  has(name: string): boolean {
    return this.drivers.has(name);
  }

  names(): string[] {
    return [...this.drivers.keys()];
  }
}
