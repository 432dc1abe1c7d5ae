import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Locator } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import { skipBrowserTests } from './chromium.js';
import { alertCode, api, checkBothWidths, page, setUpConsole, signInInBrowser } from './console.js';

/** A small CSV export in a folder named by IMPORT_ROOTS: 3 customers, a product, 3 licenses, 3 sites (one unreadable). */
const root = mkdtempSync(join(tmpdir(), 'tollgate-import-root-'));
const folder = join(root, 'acme-export');
const tag = `${process.pid}${Date.now().toString(36)}`;
function writeExport() {
  mkdirSync(folder);
  const write = (name: string, lines: string[]) =>
    writeFileSync(join(folder, name), `${lines.join('\r\n')}\r\n`);
  write('customers.csv', [
    'id,email,first_name,last_name',
    'c1,ann@example.com,Ann,Lee',
    'c2,bob@example.com,Bob,Ray',
    'c3,cy@example.com,Cy,Po',
  ]);
  write('products.csv', ['id,name,slug,price', `p1,Acme SEO,acme-seo-${tag},49.00`]);
  write('licenses.csv', [
    'id,key,product_id,customer_id,status',
    `l1,ACME-1-${tag},p1,c1,active`,
    `l2,ACME-2-${tag},p1,c2,active`,
    `l3,ACME-3-${tag},p1,c3,disabled`,
  ]);
  write('activations.csv', [
    'id,license_id,url',
    'a1,l1,https://ann.example.com',
    'a2,l2,https://bob.example.org',
    'a3,l3,not a url',
  ]);
}

/** The texts of a table row's cells. */
const cells = (table: Locator, row: RegExp) =>
  table.getByRole('row', { name: row }).getByRole('cell').allTextContents();

/**
 * The console's Import screen (docs/migrating.md, 'From the console') in a real browser, by keyboard
 * only: a dry run of a CSV export, then the import, each followed by its progress bar to the end and
 * its report (counts, reconciliation, the row not imported); accessible at 1280 and 390 px.
 */
describe.skipIf(skipBrowserTests)("the console's Import screen in a real browser", () => {
  setUpConsole({ env: { IMPORT_ROOTS: root } });

  it('runs a dry run and an import of a CSV export by keyboard and shows their reports', async () => {
    writeExport();
    await signInInBrowser('/admin/import');
    await page.getByRole('heading', { name: 'Import', level: 1 }).waitFor();
    const csv = page.getByRole('radio', { name: /^CSV files/ });
    expect(await csv.isChecked()).toBe(true);

    // A folder outside every import root is refused with its code, and nothing starts.
    await csv.focus();
    await page.keyboard.press('Tab');
    await page.keyboard.type('/etc');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.locator('[role=alert][data-code]').first().waitFor();
    expect(await alertCode()).toBe('import_dir_outside_roots');

    // The dry run: Tab back to the folder, replace it, Enter on "Dry run".
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.type(folder);
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.textContent')).toBe('Dry run');
    await page.keyboard.press('Enter');
    const progress = page.getByRole('progressbar', { name: /Done: 9 of 9 records/ });
    await progress.waitFor({ timeout: 60_000 });
    expect([await progress.getAttribute('value'), await progress.getAttribute('max')]).toEqual(['9', '9']);
    await page.getByText('Dry run done, nothing written').waitFor();
    const imported = async () =>
      (
        await api<{ licenses: { license_key: string }[] }>('GET', '/licenses?per_page=100')
      ).body.licenses.filter((l) => l.license_key.endsWith(tag)).length;
    expect(await imported()).toBe(0);

    // The import: Tab from the folder past "Dry run" to "Import".
    await page.getByLabel('Folder on the server').focus();
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.textContent')).toBe('Import');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: /^Import #\d+ from CSV files/ }).waitFor();
    await page.getByRole('progressbar', { name: /Done: 9 of 9 records/ }).waitFor({ timeout: 60_000 });
    await page.getByText('Import done: every row of the source is in Tollgate').waitFor();
    const counts = page.getByRole('region', { name: 'What the import did, per kind' });
    expect(await cells(counts, /Licenses/)).toEqual(['Licenses', '3', '0', '0']);
    const reconciliation = page.getByRole('region', { name: /Reconciliation/ });
    expect(await cells(reconciliation, /Sites/)).toEqual(['Sites', '3', '2', '1', 'Yes']);
    const problems = page.getByRole('region', { name: 'Rows not imported, and why' });
    await page.getByRole('heading', { name: '1 row not imported' }).waitFor();
    expect(await cells(problems, /a3/)).toEqual(['Sites', 'a3', 'invalid_url', '—']);
    await waitFor(
      async () =>
        (await page
          .getByRole('region', { name: 'Recent imports, newest first' })
          .locator('tbody tr')
          .count()) === 2,
      'the two jobs in the recent list',
    );
    expect(await imported()).toBe(3);

    await checkBothWidths('import');
  }, 180_000);

  it('a dry run of a Freemius export lists the PayPal subscription to cancel at the old gateway', async () => {
    const fs = join(root, 'fs-export');
    mkdirSync(fs);
    const json = (name: string, list: unknown[]) =>
      writeFileSync(join(fs, `${name}.json`), JSON.stringify({ [name]: list }));
    json('plugins', [{ id: 9, slug: `fs-seo-${tag}`, title: 'FS SEO', type: 'plugin' }]);
    json('users', [{ id: 7, email: `dee.${tag}@example.com`, created: '2024-01-02 03:04:05' }]);
    json('licenses', [
      {
        id: 5,
        plugin_id: 9,
        user_id: 7,
        quota: 1,
        expiration: '2030-05-06 07:08:09',
        secret_key: `sk_${tag}`,
      },
    ]);
    json('subscriptions', [
      {
        id: 76,
        user_id: 7,
        plugin_id: 9,
        license_id: 5,
        billing_cycle: 12,
        amount_per_cycle: 49.99,
        currency: 'usd',
        next_payment: '2030-05-06 07:08:09',
        gateway: 'paypal',
        external_id: 'I-7HV3X9KQ2B1A',
        created: '2024-01-02 03:05:00',
      },
    ]);
    await page.getByRole('radio', { name: /^Freemius/ }).check();
    await page.getByLabel('Folder on the server').fill(fs);
    await page.getByRole('button', { name: 'Dry run', exact: true }).click();
    await page.getByText('Dry run done, nothing written').waitFor({ timeout: 60_000 });
    await page.getByRole('heading', { name: 'Cancel these at the old gateway' }).waitFor();
    const listed = page.getByRole('region', { name: 'Subscriptions the old gateway still bills by itself' });
    expect(await cells(listed, /76/)).toEqual([
      '76',
      'paypal',
      'I-7HV3X9KQ2B1A',
      expect.stringContaining('2030'),
    ]);
    await checkBothWidths('import-old-gateway');
  }, 180_000);
});
