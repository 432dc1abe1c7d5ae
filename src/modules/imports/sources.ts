import { CsvSource } from './csv/source.js';
import type { ImportSource } from './records.js';

/** The sources `npm run import -- <source>` knows, and the arguments each needs. */
export const SOURCES: Record<
  string,
  { usage: string; open: (args: Record<string, string>) => ImportSource }
> = {
  csv: {
    usage: 'csv --dir <folder of CSV files>',
    open: (args) => {
      if (!args.dir) throw new SourceArgumentsError('csv needs --dir <folder>');
      return new CsvSource(args.dir);
    },
  },
};

export class SourceArgumentsError extends Error {}

export function openSource(name: string, args: Record<string, string>): ImportSource {
  const source = SOURCES[name];
  if (!source) {
    throw new SourceArgumentsError(`unknown source "${name}": one of ${Object.keys(SOURCES).join(', ')}`);
  }
  return source.open(args);
}
