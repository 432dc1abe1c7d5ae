import { randomHex } from '../random.js';
import type { AppStateRepository } from './app-state.repository.js';

/**
 * Named server secrets of 32 random bytes, created once in `app_state` (the first process to
 * start wins the insert) and then read by every process that shares the database, so that what
 * one process signs another verifies. Each is loaded once per process; a failed load is retried.
 */
export class AppSecrets {
  private readonly loaded = new Map<string, Promise<Buffer>>();

  constructor(private readonly appState: AppStateRepository) {}

  get(name: string): Promise<Buffer> {
    let secret = this.loaded.get(name);
    if (!secret) {
      secret = this.load(name).catch((e) => {
        this.loaded.delete(name);
        throw e;
      });
      this.loaded.set(name, secret);
    }
    return secret;
  }

  private async load(name: string): Promise<Buffer> {
    await this.appState.setIfAbsent(name, randomHex(32));
    const value = await this.appState.get(name);
    if (value === undefined) throw new Error(`app secret ${name} is missing after its insert`);
    return Buffer.from(value, 'hex');
  }
}
