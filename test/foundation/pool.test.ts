import { describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_POOL_SIZE, loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/database.js';

const URL = 'postgres://tollgate@127.0.0.1:1/none';

describe('DATABASE_POOL_SIZE', () => {
  it('defaults to the measured size and takes a whole number from 1 to 200', () => {
    const size = (v?: string) => {
      const c = loadConfig({ DATABASE_URL: URL, ...(v === undefined ? {} : { DATABASE_POOL_SIZE: v }) });
      return c.database.kind === 'postgres' ? c.database.poolSize : undefined;
    };
    expect(size()).toBe(DEFAULT_POOL_SIZE);
    expect(size('')).toBe(DEFAULT_POOL_SIZE);
    expect(size('1')).toBe(1);
    expect(size('32')).toBe(32);
    for (const bad of ['0', '201', '-1', '2.5', 'ten', ' 5']) expect(() => size(bad)).toThrow(ConfigError);
  });

  it('sizes the pool, which keeps an idle connection (and its prepared statements) through a lull', async () => {
    // No connection is made until a query: the pool's options are what is checked here.
    const database = openDatabase({ kind: 'postgres', url: URL, poolSize: 7 });
    try {
      expect(database.pg?.options.max).toBe(7);
      // node-postgres closes an idle connection after 10 s by default: a pause in traffic then cost
      // every hot statement's planning again on new connections.
      expect(database.pg?.options.idleTimeoutMillis).toBeGreaterThanOrEqual(60_000);
    } finally {
      await database.close();
    }
  });
});
