import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { ensureConsoleBuilt } from '../../scripts/build-admin.js';
import { dialectUnderTest, freshDatabase, type TestDatabase } from '../helpers/db.js';
import { OFFLINE_INSTRUCTIONS } from '../helpers/factories.js';
import { type ServerProcess, startServer } from '../helpers/server.js';
import { launch } from './chromium.js';

/**
 * What every browser test of the store owner's console (console, docs/admin.md) shares: the real
 * server (`src/main.ts serve`, a child process on SQLite, or on a fresh PostgreSQL database when
 * DATABASE_URL is set) started the way the README starts a store, with ADMIN_EMAIL and
 * ADMIN_PASSWORD; Debian's chromium with JavaScript on; the owner's API session; axe-core and the
 * screenshots. A test file calls `setUpConsole()` inside its `describe` and uses the exported
 * bindings, which are live (ES module bindings), once its `beforeAll` has run. The console is built
 * first when dist/admin is missing or was built from other sources (scripts/build-admin.ts).
 * SAVE_SCREENSHOTS=1 writes the pictures of docs/admin.md.
 */
export const OWNER = { email: 'owner@example.com', password: 'owner-password-1' };
const DOCS_SHOTS = fileURLToPath(new URL('../../docs/screenshots/', import.meta.url));
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
export const WIDE = { width: 1280, height: 800 };
export const NARROW = { width: 390, height: 844 };
/** The first load's budget: every byte Chromium receives for /admin until the sign-in form (docs/performance.md). */
export const FIRST_LOAD_BUDGET = 160 * 1024;

export let server: ServerProcess;
/** On PostgreSQL (DATABASE_URL set) the server gets a fresh database of its own; on SQLite its DATA_DIR holds it. */
let database: TestDatabase | undefined;
export let context: BrowserContext;
export let page: Page;
const dirs: string[] = [];
const shotsDir =
  process.env.SAVE_SCREENSHOTS === '1' ? DOCS_SHOTS : mkdtempSync(join(tmpdir(), 'tollgate-admin-shots-'));
if (shotsDir !== DOCS_SHOTS) dirs.push(shotsDir);

/** The API as the owner, outside the browser: a session cookie and its nonce. */
export let session: { cookie: string; nonce: string };
export async function api<T = Record<string, unknown>>(method: string, path: string, body?: unknown) {
  const res = await fetch(`${server.url}/v1${path}`, {
    method,
    headers: {
      cookie: session.cookie,
      'x-rest-nonce': session.nonce,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as T };
}
export async function signIn(email: string, password: string) {
  const res = await fetch(`${server.url}/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  expect(res.status).toBe(200);
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith('tollgate_session='))!;
  return { cookie: cookie.split(';')[0]!, nonce: ((await res.json()) as { nonce: string }).nonce };
}

/**
 * Enables bank transfer and cheque with OFFLINE_INSTRUCTIONS through the API: a new store starts in
 * test mode with only the test card on (docs/payments.md, 'Test mode and live mode').
 */
export async function enableOfflineGateways() {
  for (const id of ['bacs', 'cheque'] as const) {
    const res = await api('PATCH', `/payment-gateways/${id}`, {
      enabled: true,
      instructions: OFFLINE_INSTRUCTIONS[id],
    });
    expect(res.status).toBe(200);
  }
}

/** axe-core on the page as it is: no serious or critical finding. */
export async function expectAccessible(what: string) {
  await page.evaluate(AXE);
  // Code for the page is given as text: the test's TypeScript knows Node's globals, not the DOM's.
  const violations = (await page.evaluate(`(async () => {
    const result = await window.axe.run({ resultTypes: ['violations'] });
    return result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => v.impact + ' ' + v.id + ': ' + v.nodes.map((n) => n.target.join(' ')).join(', '));
  })()`)) as string[];
  expect(violations, what).toEqual([]);
}

/** Fails when the page scrolls sideways: at 390 px only a table's own region may scroll. */
export async function expectNoSidewaysScroll(what: string) {
  const overflow = (await page.evaluate(
    'document.documentElement.scrollWidth - window.innerWidth',
  )) as number;
  expect(overflow, `${what} is wider than the screen`).toBeLessThanOrEqual(0);
}

/** A picture of the page: docs/screenshots/<area>-<name>.png with SAVE_SCREENSHOTS=1 (area: admin or store). */
export const shot = (name: string, fullPage = true, area: 'admin' | 'store' = 'admin') =>
  page.screenshot({ path: join(shotsDir, `${area}-${name}.png`), fullPage });

/**
 * A screen at both widths: axe-core clean at 1280 and 390 px, nothing wider than the screen at
 * 390 px, and a screenshot of each (`<area>-<name>-1280.png`, `-390.png`); back at 1280 px after.
 */
export async function checkBothWidths(name: string, area: 'admin' | 'store' = 'admin') {
  await page.setViewportSize(WIDE);
  await expectAccessible(`${name} at 1280 px`);
  await shot(`${name}-1280`, true, area);
  await page.setViewportSize(NARROW);
  await expectAccessible(`${name} at 390 px`);
  await expectNoSidewaysScroll(`${name} at 390 px`);
  await shot(`${name}-390`, true, area);
  await page.setViewportSize(WIDE);
}

/** The console's own alert of a refused request carries the API's code (the words are the server's). */
export const alertCode = async () =>
  page.locator('[role=alert][data-code]').first().getAttribute('data-code');

/** `env`: more of the server's environment (e.g. `TEST_CLOCK: '1'`). */
export function setUpConsole(opts: { env?: Record<string, string> } = {}) {
  beforeAll(async () => {
    ensureConsoleBuilt({ quiet: true });
    const data = mkdtempSync(join(tmpdir(), 'tollgate-admin-data-'));
    dirs.push(data);
    if (dialectUnderTest === 'postgres') database = await freshDatabase();
    const url: Record<string, string> =
      database?.config.kind === 'postgres' ? { DATABASE_URL: database.config.url } : {};
    server = await startServer(
      { DATA_DIR: data, ADMIN_EMAIL: OWNER.email, ADMIN_PASSWORD: OWNER.password, ...url, ...opts.env },
      90_000, // a loaded machine (CI shares it) may take longer than the usual 30 s to start it
    );
    session = await signIn(OWNER.email, OWNER.password);
    mkdirSync(shotsDir, { recursive: true });
    const profile = mkdtempSync(join(tmpdir(), 'tollgate-chromium-'));
    dirs.push(profile);
    context = await launch(profile, { viewport: WIDE });
    page = context.pages()[0] ?? (await context.newPage());
  }, 240_000);

  afterAll(async () => {
    await context?.close();
    await server?.stop();
    await database?.drop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
}

/** Signs the owner in through the console's own form, at `path` (a screen of the console). */
export async function signInInBrowser(path = '/admin/licenses') {
  await page.goto(`${server.url}${path}`);
  await page.locator('#email').waitFor();
  await page.fill('#email', OWNER.email);
  await page.fill('#password', OWNER.password);
  await page.click('button[type=submit]');
  await page.locator('h1').first().waitFor();
  await waitUntilSignedIn();
}

/**
 * Presses Tab until the focused element satisfies `test`, an expression over `el` (keyboard only:
 * nothing is clicked); fails when the focus never gets there.
 */
export async function tabTo(test: string, what = test) {
  for (let i = 0; i < 120; i++) {
    await page.keyboard.press('Tab');
    const hit = (await page.evaluate(
      `(() => { const el = document.activeElement; return !!el && (${test}); })()`,
    )) as boolean;
    if (hit) return;
  }
  throw new Error(`Tab never reached ${what}`);
}

/** Tab until the element matching `selector` has the focus. */
export const tabToSelector = (selector: string) => tabTo(`el.matches(${JSON.stringify(selector)})`, selector);

async function waitUntilSignedIn() {
  for (let i = 0; i < 100 && (await page.locator('#email').count()) > 0; i++) await page.waitForTimeout(50);
  expect(await page.locator('#email').count()).toBe(0);
}
