import { describe, expect, it } from 'vitest';
import { makeZip } from '../helpers/factories.js';
import { skipBrowserTests } from './chromium.js';
import {
  api,
  expectAccessible,
  expectNoSidewaysScroll,
  NARROW,
  page,
  server,
  session,
  setUpConsole,
  signInInBrowser,
  WIDE,
} from './console.js';

/**
 * The WordPress versions of a release on the console's release screen (docs/admin.md; docs/releases.md,
 * 'Metadata WordPress shows'): shown in the list and edited; a refused value changes nothing.
 */
describe.skipIf(skipBrowserTests)("the console's release metadata in a real browser", () => {
  setUpConsole();

  it('shows and edits requires, tested and requires_php', async () => {
    const product = await api<{ id: number }>('POST', '/products', { name: 'Meta Pro', price: '10.00' });
    expect(product.status).toBe(201);
    const id = product.body.id;
    const config = await api('POST', `/software/products/${id}/config`, {
      slug: 'meta-pro',
      software_enabled: 'yes',
    });
    expect(config.status).toBe(200);
    const form = new FormData();
    form.append('version', '1.0.0');
    form.append('file', new Blob([makeZip()]), 'meta-pro-1.0.0.zip');
    const upload = await fetch(`${server.url}/v1/software/products/${id}/versions`, {
      method: 'POST',
      headers: { cookie: session.cookie, 'x-rest-nonce': session.nonce },
      body: form,
    });
    expect(upload.status).toBe(201);
    const release = (await upload.json()) as { version_id: number };

    await signInInBrowser(`/admin/products/${id}/releases`);
    await page.getByRole('heading', { level: 1, name: 'Releases of Meta Pro' }).waitFor();
    await page.getByRole('button', { name: 'WordPress versions of 1.0.0' }).click();
    await page.getByLabel('Requires WordPress').fill('6.1');
    await page.getByLabel('Tested up to').fill('6.4');
    await page.getByLabel('Requires PHP').fill('8.0');
    await page.getByRole('button', { name: 'Save versions' }).click();
    await page.getByText('The WordPress versions of 1.0.0 are saved.').waitFor();
    await page.getByRole('cell', { name: 'needs 6.1, tested 6.4, PHP 8.0' }).waitFor();
    const stored = async () =>
      (await api<{ releases: Record<string, unknown>[] }>('GET', `/software/products/${id}/versions`)).body
        .releases[0];
    expect(await stored()).toMatchObject({
      version_id: release.version_id,
      requires: '6.1',
      tested: '6.4',
      requires_php: '8.0',
    });
    await expectAccessible('a release with its WordPress versions');

    // The form refuses what is no version before asking; an empty field clears the value.
    await page.getByRole('button', { name: 'WordPress versions of 1.0.0' }).click();
    await page.getByLabel('Tested up to').fill('6.4 beta');
    await page.getByRole('button', { name: 'Save versions' }).click();
    await page.getByText('A version like 6.1 or 8.0.').waitFor();
    await page.getByLabel('Tested up to').fill('');
    await page.getByLabel('Requires PHP').fill('');
    await page.getByRole('button', { name: 'Save versions' }).click();
    await page.getByText('The WordPress versions of 1.0.0 are saved.').waitFor();
    expect(await stored()).toMatchObject({ requires: '6.1', tested: null, requires_php: null });
    expect(await page.locator('[role=alert][data-code]').count()).toBe(0);

    await page.setViewportSize(NARROW);
    await expectNoSidewaysScroll('the release list at 390 px');
    await page.setViewportSize(WIDE);
  }, 120_000);
});
