import type { ImportSource } from './records.js';

/**
 * The import sources by name (`npm run import -- <source> …`, docs/migrating.md). Each loads its
 * module on demand, so a source's database driver is loaded only when that source runs.
 */
export const SOURCES: Record<string, () => Promise<(args: Record<string, string>) => ImportSource>> = {
  edd: async () => {
    const { eddSource } = await import('./edd/source.js');
    return (args) => eddSource({ db: required(args, 'db'), prefix: args.prefix ?? 'wp_' });
  },
  woocommerce: async () => {
    const { wooCommerceSource } = await import('./woocommerce/source.js');
    return (args) =>
      wooCommerceSource({
        db: required(args, 'db'),
        prefix: args.prefix ?? 'wp_',
        ...(args['defuse-key'] ? { defuseKey: args['defuse-key'] } : {}),
        ...(args.secret ? { secret: args.secret } : {}),
      });
  },
};

function required(args: Record<string, string>, name: string): string {
  const value = args[name];
  if (!value) throw new Error(`--${name} is required`);
  return value;
}
