import type { ImportSource } from './records.js';

/**
 * The sources `npm run import -- <source> …` knows (docs/migrating.md), and the arguments each
 * needs. Each loads its module on demand, so a source's database driver (mysql2) is loaded only
 * when that source runs.
 */
export const SOURCES: Record<
  string,
  { usage: string; open: (args: Record<string, string>) => Promise<ImportSource> }
> = {
  csv: {
    usage: 'csv --dir <folder of CSV files>',
    open: async (args) => {
      const { CsvSource } = await import('./csv/source.js');
      return new CsvSource(required(args, 'dir'));
    },
  },
  edd: {
    usage: 'edd --db mysql://user:password@host/database [--prefix wp_]',
    open: async (args) => {
      const { eddSource } = await import('./edd/source.js');
      return eddSource({ db: required(args, 'db'), prefix: args.prefix ?? 'wp_' });
    },
  },
  freemius: {
    usage:
      'freemius --dir <folder of Freemius exports: plugins, plans, pricing, users, payments, subscriptions, licenses, installs>',
    open: async (args) => {
      const { freemiusSource } = await import('./freemius/source.js');
      return freemiusSource(required(args, 'dir'));
    },
  },
  woocommerce: {
    usage:
      'woocommerce --db mysql://user:password@host/database [--prefix wp_] [--defuse-key <key>] [--secret <secret>]',
    open: async (args) => {
      const { wooCommerceSource } = await import('./woocommerce/source.js');
      return wooCommerceSource({
        db: required(args, 'db'),
        prefix: args.prefix ?? 'wp_',
        ...(args['defuse-key'] ? { defuseKey: args['defuse-key'] } : {}),
        ...(args.secret ? { secret: args.secret } : {}),
      });
    },
  },
};

export class SourceArgumentsError extends Error {}

function required(args: Record<string, string>, name: string): string {
  const value = args[name];
  if (!value) throw new SourceArgumentsError(`--${name} is required`);
  return value;
}

export async function openSource(name: string, args: Record<string, string>): Promise<ImportSource> {
  const source = SOURCES[name];
  if (!source) {
    throw new SourceArgumentsError(`unknown source "${name}": one of ${Object.keys(SOURCES).join(', ')}`);
  }
  return source.open(args);
}
