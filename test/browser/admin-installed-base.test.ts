import { describe, expect, it } from 'vitest';
import { identity, makeZip } from '../helpers/factories.js';
import { skipBrowserTests } from './chromium.js';
import { api, checkBothWidths, page, server, session, setUpConsole, signInInBrowser } from './console.js';

/**
 * "In the field" on the product screen (docs/admin.md, 'In the field'): the empty state, then the
 * versions, platforms and PHP versions of sites that checked for updates over HTTP; the range is
 * chosen by keyboard.
 */
describe.skipIf(skipBrowserTests)("the console's installed-base report in a real browser", () => {
  setUpConsole();

  it('shows the empty state, then sites by version, platform and PHP, with their shares', async () => {
    expect((await api('PATCH', '/settings', { rate_limit: 100 })).status).toBe(200);
    const product = await api<{ id: number }>('POST', '/products', {
      name: 'Field Plugin',
      price: '10.00',
      status: 'publish',
      licensing_enabled: 'no',
    });
    expect(product.status).toBe(201);
    const id = product.body.id;
    const config = await api('POST', `/software/products/${id}/config`, {
      slug: 'field-plugin',
      software_enabled: 'yes',
    });
    expect(config.status, JSON.stringify(config.body)).toBe(200);
    const form = new FormData();
    form.append('version', '2.1.0');
    form.append('file', new Blob([makeZip()]), 'field-plugin-2.1.0.zip');
    const upload = await fetch(`${server.url}/v1/software/products/${id}/versions`, {
      method: 'POST',
      headers: { cookie: session.cookie, 'x-rest-nonce': session.nonce },
      body: form,
    });
    expect(upload.status).toBe(201);

    await signInInBrowser(`/admin/products/${id}`);
    const section = page.locator('section[aria-labelledby=field]');
    await section.getByRole('heading', { name: 'In the field', level: 2 }).waitFor();
    await section.getByText('No site has reported in these days.').waitFor();

    // Twelve sites: 6 on 2.1.0, 4 on 2.0.0, 2 on 1.9.3; WordPress and PHP versions for most.
    const hosts = [
      { platform: 'wordpress', platform_version: '6.5.2', php_version: '8.2.12' },
      { platform: 'wordpress', platform_version: '6.4.3', php_version: '8.1.27' },
      { platform: 'wordpress', platform_version: '6.5.0', php_version: '7.4.33' },
      {},
    ];
    for (let i = 0; i < 12; i++) {
      const site = identity(`field-${i}.example.com`);
      const res = await fetch(`${server.url}/v1/software/check`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          slug: 'field-plugin',
          version: i < 6 ? '2.1.0' : i < 10 ? '2.0.0' : '1.9.3',
          site_url: `https://${site.domain}/`,
          installation_id: site.installation_id,
          ...hosts[i % 4],
        }),
      });
      expect(res.status).toBe(200);
    }

    // Choose the range by keyboard: the report is read again (and flushed first by the server).
    const select = section.getByLabel('Days');
    await select.focus();
    await page.keyboard.press('ArrowDown');
    expect(await select.inputValue()).toBe('90');
    await section.getByRole('heading', { name: 'Versions, day by day' }).waitFor();
    await section.getByText('2.1.0: 6 (50%)').waitFor();
    await section.getByText('2.0.0: 4 (33.3%)').waitFor();
    await section.getByText('1.9.3: 2 (16.7%)').waitFor();
    const platforms = section.getByRole('table', { name: /Platform versions/ });
    await platforms.getByRole('cell', { name: '6.5', exact: true }).waitFor();
    expect(await platforms.getByRole('row').count()).toBe(3);
    const php = section.getByRole('table', { name: /PHP versions/ });
    await php.getByRole('cell', { name: 'PHP 7.4' }).waitFor();
    expect(await php.getByRole('row').count()).toBe(4);
    await section.scrollIntoViewIfNeeded();
    await checkBothWidths('product-field');
  });
});
