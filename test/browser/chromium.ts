import { existsSync } from 'node:fs';
import { type BrowserContext, chromium, type LaunchOptions } from 'playwright-core';

/** Debian's chromium (`apt-get install chromium`); never a downloaded browser. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const noChromium = !existsSync(CHROMIUM) && !process.env.CI;

/**
 * Browser tests run where chromium is installed, and must run under CI, which installs it.
 * `SKIP_BROWSER_TESTS=1` skips them all: CI's runs on the other Node.js lines set it, as a browser
 * test checks pages, not the runtime (.ci/run). The console's tests (test/browser/admin*.test.ts)
 * also check what the database answers (lists sorted, searched and filtered by it), and the
 * storefront's (test/browser/store.test.ts) a whole purchase, so CI's PostgreSQL run keeps them
 * and skips only the page tests, with `SKIP_BROWSER_TESTS=all-but-console`.
 */
export const skipBrowserTests = process.env.SKIP_BROWSER_TESTS === '1' || noChromium;

/** For the browser tests of pages whose result does not depend on the database. */
export const skipPageBrowserTests = skipBrowserTests || process.env.SKIP_BROWSER_TESTS === 'all-but-console';

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
