import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Every file in the vault at `vaultDir` (an app's `config.vaultDir`, or `<DATA_DIR>/vault` of a
 * server process), as sorted paths relative to it; the staging folder is left out.
 */
export function vaultFiles(vaultDir: string): string[] {
  const out: string[] = [];
  const walk = (dir: string, rel: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.name === '.staging') continue;
      if (e.isDirectory()) walk(join(dir, e.name), `${rel}${e.name}/`);
      else out.push(`${rel}${e.name}`);
    }
  };
  if (existsSync(vaultDir)) walk(vaultDir, '');
  return out.sort();
}

/** The names of the files in the vault's staging folder (uploads under way or left by a crash). */
export function stagingFiles(vaultDir: string): string[] {
  const dir = join(vaultDir, '.staging');
  return existsSync(dir) ? readdirSync(dir) : [];
}
