import { describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import { pluginZip, themeZip, zipOf } from '../helpers/zip.js';
import { skipBrowserTests } from './chromium.js';
import {
  alertCode,
  api,
  checkBothWidths,
  expectAccessible,
  page,
  setUpConsole,
  signInInBrowser,
} from './console.js';

/**
 * The release form's Version is the zip's (docs/admin.md, 'Releases'; docs/releases.md, 'The
 * version is the zip's'): read in the browser from the chosen file, replaced when another is
 * chosen, never the previous file's; a mismatch is shown at the field with the override.
 */
describe.skipIf(skipBrowserTests)("the release form's version, read from the zip in a real browser", () => {
  setUpConsole();

  it('fills Version from the header, follows the file chosen, and publishes a mismatch only when told', async () => {
    const product = await api<{ id: number }>('POST', '/products', { name: 'Header Pro', price: '10.00' });
    expect(product.status).toBe(201);
    const id = product.body.id;
    expect(
      (await api('POST', `/software/products/${id}/config`, { slug: 'header-pro', software_enabled: 'yes' }))
        .status,
    ).toBe(200);

    await signInInBrowser(`/admin/products/${id}/releases`);
    await page.getByRole('heading', { level: 1, name: 'Releases of Header Pro' }).waitFor();
    const input = page.locator('input[type=file]');
    const version = page.getByLabel('Version', { exact: true });
    const choose = (name: string, buffer: Buffer) =>
      input.setInputFiles({ name, mimeType: 'application/zip', buffer });
    const versionBecomes = (value: string) =>
      waitFor(async () => (await version.inputValue()) === value, `Version is "${value}"`);

    // A plugin (deflated main file), then a theme: the field follows the file chosen.
    await choose('header-pro.zip', pluginZip('1.0.0', 'header-pro'));
    await versionBecomes('1.0.0');
    await page.getByText("From the zip's header: 1.0.0").waitFor();
    await choose('theme.zip', themeZip('1.1.0'));
    await versionBecomes('1.1.0');
    // A zip without a header: never the previous file's version; empty, as nothing was typed.
    await choose('app.zip', zipOf([{ name: 'app/index.js', data: 'console.log(1)\n' }]));
    await versionBecomes('');

    // The owner's own version against the zip's: refused at the field, with the override.
    const zip = pluginZip('1.0.0', 'header-pro');
    await choose('header-pro.zip', zip);
    await versionBecomes('1.0.0');
    await version.fill('1.0.1');
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await page.getByText("The zip's plugin header says 1.0.0, not 1.0.1").waitFor();
    expect(await version.getAttribute('aria-invalid')).toBe('true');
    const override = page.getByLabel('Publish under this version anyway');
    await override.waitFor();
    await checkBothWidths('release-version-mismatch');
    await override.check();
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await page.getByText('Published 1.0.1.').waitFor();
    const releases = (
      await api<{ releases: { version: string; version_id: number }[] }>(
        'GET',
        `/software/products/${id}/versions`,
      )
    ).body.releases;
    expect(releases.map((r) => r.version)).toEqual(['1.0.1']);
    const events = (
      await api<{ action: string; changes: Record<string, { after: unknown }> }[]>(
        'GET',
        `/audit-events?entity_type=release&entity_id=${releases[0]!.version_id}`,
      )
    ).body;
    expect(events[0]!.changes).toMatchObject({
      version_override: { after: true },
      header_version: { after: '1.0.0' },
    });
    expect(await page.getByLabel('Publish under this version anyway').count()).toBe(0);

    // The same bytes again: refused, naming the release in words.
    await choose('header-pro.zip', zip);
    await versionBecomes('1.0.0');
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await waitFor(async () => (await alertCode()) === 'duplicate_artifact', 'a duplicate is refused');
    await page.getByText('This file is already version 1.0.1 of this product.').waitFor();
    await expectAccessible('a duplicate refused');
  }, 120_000);
});
