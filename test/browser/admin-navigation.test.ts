import { describe, expect, it } from 'vitest';
import { skipPageBrowserTests } from './chromium.js';
import {
  expectAccessible,
  expectNoSidewaysScroll,
  NARROW,
  page,
  setUpConsole,
  shot,
  signInInBrowser,
  WIDE,
} from './console.js';

/** Every entry of the console's navigation, in the order it is read and tabbed through. */
const ENTRIES = [
  'Dashboard',
  'Licenses',
  'Products',
  'Orders',
  'Customers',
  'Subscriptions',
  'Coupons',
  'Tax rates',
  'Tax report',
  'Shipping',
  'Gateways',
  'Webhooks',
  'Mail',
  'Import',
  'Storage',
  'Settings',
  'Audit',
  'App passwords',
];

const nav = () => page.getByRole('navigation', { name: 'Main' });

/** The distinct rows the navigation's links, the owner's email and Sign out stand on (by their middles). */
async function navRows() {
  const tops =
    (await page.evaluate(`[...document.querySelectorAll('#main-nav a, #main-nav button, #main-nav .email')]
    .filter((e) => e.getClientRects().length > 0)
    .map((e) => Math.round(e.getBoundingClientRect().top + e.getBoundingClientRect().height / 2))`)) as number[];
  // Items of one row are centred on one line: a few pixels apart at most (fonts of two sizes).
  const rows: number[] = [];
  for (const top of tops.sort((a, b) => a - b)) {
    if (rows.length === 0 || top - rows[rows.length - 1]! > 8) rows.push(top);
  }
  return rows.length;
}

/**
 * The console's navigation (docs/admin.md, 'Narrow screens, keyboard, accessibility'): at 1280 px
 * its eighteen entries and the signed-in owner's links stand on two rows; by keyboard,
 * Tab reaches every entry in order and Enter opens it; at 390 px the Menu button shows them all and
 * closes once a screen is chosen. The layout does not depend on the database: runs once (SQLite).
 */
describe.skipIf(skipPageBrowserTests)('the console navigation in a real browser', () => {
  setUpConsole();

  it('stands on two rows at 1280 px and every entry opens its screen', async () => {
    await signInInBrowser('/admin/import');
    await page.getByRole('heading', { level: 1, name: 'Import' }).waitFor();
    expect(await nav().getByRole('listitem').allTextContents()).toEqual(ENTRIES);
    expect(await navRows()).toBe(2);
    await expectAccessible('the navigation at 1280 px');
    await shot('navigation-1280', false);

    // By keyboard: from the brand, Tab goes through the entries in their order; Enter opens one.
    await page.getByRole('link', { name: 'Tollgate', exact: true }).focus();
    for (const name of ENTRIES) {
      await page.keyboard.press('Tab');
      expect(await page.evaluate('document.activeElement.textContent')).toBe(name);
    }
    await nav().getByRole('link', { name: 'Tax report', exact: true }).focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/admin\/tax-report$/);
    await page.getByRole('heading', { level: 1 }).first().waitFor();
    expect(
      await nav().getByRole('link', { name: 'Tax report', exact: true }).getAttribute('aria-current'),
    ).toBe('page');

    // A window a little narrower still keeps the two groups apart and nothing wider than it.
    await page.setViewportSize({ width: 1024, height: 800 });
    await expectNoSidewaysScroll('the navigation at 1024 px');
    await page.setViewportSize(WIDE);
  }, 60_000);

  it('folds into the Menu button at 390 px: every entry inside, closed once one is chosen', async () => {
    await page.setViewportSize(NARROW);
    const menu = page.getByRole('button', { name: 'Menu' });
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    expect(await nav().isVisible()).toBe(false);
    await menu.focus();
    await page.keyboard.press('Enter');
    expect(await menu.getAttribute('aria-expanded')).toBe('true');
    for (const name of ENTRIES)
      expect(await nav().getByRole('link', { name, exact: true }).isVisible()).toBe(true);
    await expectAccessible('the open menu at 390 px');
    await expectNoSidewaysScroll('the open menu at 390 px');
    await shot('navigation-390', false);
    await nav().getByRole('link', { name: 'App passwords', exact: true }).click();
    await page.waitForURL(/\/admin\/app-passwords$/);
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    await page.setViewportSize(WIDE);
  }, 60_000);
});
