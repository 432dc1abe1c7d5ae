import { describe, expect, it } from 'vitest';
import { makeZip } from '../helpers/factories.js';
import { skipBrowserTests } from './chromium.js';
import {
  alertCode,
  api,
  checkBothWidths,
  expectAccessible,
  page,
  server,
  session,
  setUpConsole,
  signInInBrowser,
} from './console.js';

/**
 * A release's channel and staged rollout on the console's release screen (docs/admin.md;
 * docs/releases.md, 'Channels and staged rollouts'): the badge and the rollout column, the
 * channel select, raise, pause and complete, and a refused figure shown with the API's code.
 */
describe.skipIf(skipBrowserTests)("the console's rollout controls in a real browser", () => {
  setUpConsole();

  const uploadRelease = async (id: number, version: string, extra: [string, string][] = []) => {
    const form = new FormData();
    form.append('version', version);
    for (const [k, v] of extra) form.append(k, v);
    form.append('file', new Blob([makeZip()]), `roll-pro-${version}.zip`);
    const res = await fetch(`${server.url}/v1/software/products/${id}/versions`, {
      method: 'POST',
      headers: { cookie: session.cookie, 'x-rest-nonce': session.nonce },
      body: form,
    });
    expect(res.status).toBe(201);
    return (await res.json()) as { version_id: number };
  };

  it('shows the channel and rollout, and raises, pauses and completes a rollout', async () => {
    const product = await api<{ id: number }>('POST', '/products', { name: 'Roll Pro', price: '10.00' });
    expect(product.status).toBe(201);
    const id = product.body.id;
    const config = await api('POST', `/software/products/${id}/config`, {
      slug: 'roll-pro',
      software_enabled: 'yes',
    });
    expect(config.status).toBe(200);
    await uploadRelease(id, '1.0.0');
    await uploadRelease(id, '1.1.0-beta1', [['channel', 'beta']]);
    const next = await uploadRelease(id, '1.1.0', [['rollout_percent', '10']]);
    const stored = async () =>
      (
        await api<{ releases: { version_id: number; rollout_percent: number; channel: string }[] }>(
          'GET',
          `/software/products/${id}/versions`,
        )
      ).body.releases.find((r) => r.version_id === next.version_id)!;

    await signInInBrowser(`/admin/products/${id}/releases`);
    await page.getByRole('heading', { level: 1, name: 'Releases of Roll Pro' }).waitFor();
    await page.getByRole('cell', { name: '10% · 0 sites' }).waitFor();
    await page.getByRole('cell', { name: 'beta', exact: true }).waitFor();

    // Raise, by keyboard: the figure typed and Enter.
    await page.getByRole('button', { name: 'Channel and rollout of 1.1.0', exact: true }).click();
    await page.getByRole('heading', { name: 'Channel and rollout of 1.1.0' }).waitFor();
    await page.getByLabel('Rollout of 1.1.0 (% of sites)').fill('50');
    await page.getByLabel('Rollout of 1.1.0 (% of sites)').press('Enter');
    await page.getByText('Version 1.1.0 is offered to 50% of sites.').waitFor();
    expect((await stored()).rollout_percent).toBe(50);
    await page.getByRole('cell', { name: '50% · 0 sites' }).waitFor();
    await checkBothWidths('release-rollout');

    // A figure the API refuses is shown with its code and changes nothing.
    await page.getByLabel('Rollout of 1.1.0 (% of sites)').fill('150');
    await page.getByRole('button', { name: 'Set rollout' }).click();
    await page.locator('[role=alert][data-code]').waitFor();
    expect(await alertCode()).toBe('invalid_rollout_percent');
    expect((await stored()).rollout_percent).toBe(50);

    await page.getByRole('button', { name: 'Pause' }).click();
    await page.getByText('The rollout of 1.1.0 is paused.').waitFor();
    expect((await stored()).rollout_percent).toBe(0);
    await page.getByRole('button', { name: 'Complete (100%)' }).click();
    await page.getByText('Version 1.1.0 is offered to every site.').waitFor();
    expect((await stored()).rollout_percent).toBe(100);

    // The channel select.
    await page.getByLabel('Channel of 1.1.0').selectOption('rc');
    await page.getByRole('button', { name: 'Save channel' }).click();
    await page.getByText('Version 1.1.0 is on the rc channel.').waitFor();
    expect((await stored()).channel).toBe('rc');
    await expectAccessible('the rollout panel after its changes');

    // Close gives the focus back to the button that opened the panel.
    await page.getByRole('button', { name: 'Close' }).click();
    expect(await page.evaluate('document.activeElement?.textContent')).toContain(
      'Channel and rollout of 1.1.0',
    );
  }, 180_000);
});
