import { existsSync } from 'node:fs';
import { type BrowserContext, chromium, type LaunchOptions } from 'playwright-core';

/** Debian's chromium (`apt-get install chromium`); never a downloaded browser. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Browser tests run where chromium is installed, and must run under CI, which installs it. CI
 * runs them once, in its SQLite run on the machine's Node.js: its other runs (PostgreSQL, the
 * other Node.js lines) set SKIP_BROWSER_TESTS=1, as a browser test checks pages, not the database
 * or the runtime (.ci/run).
 */
export const skipBrowserTests =
  process.env.SKIP_BROWSER_TESTS === '1' || (!existsSync(CHROMIUM) && !process.env.CI);

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A headless chromium on a fresh profile in `profile`. */
export function launch(
  profile: string,
  opts: Omit<
    NonNullable<Parameters<typeof chromium.launchPersistentContext>[1]>,
    'executablePath' | 'headless'
  > &
    Pick<LaunchOptions, 'args'> = {},
): Promise<BrowserContext> {
  return chromium.launchPersistentContext(profile, {
    ...opts,
    executablePath: CHROMIUM,
    headless: true,
    args: [...CHROMIUM_ARGS, ...(opts.args ?? [])],
  });
}
