import { describe, expect, it } from 'vitest';
import { skipBrowserTests } from './chromium.js';
import { alertCode, api, page, setUpConsole, signInInBrowser } from './console.js';

/** renewal_grace_days on the console's Settings screen (docs/licensing.md, 'Renewal grace'). */
describe.skipIf(skipBrowserTests)('renewal grace on the Settings screen in a real browser', () => {
  setUpConsole();

  it('edits renewal_grace_days: a refused value is shown and changes nothing; a good one is saved', async () => {
    const grace = async () =>
      (await api<{ renewal_grace_days: number }>('GET', '/settings')).body.renewal_grace_days;
    await signInInBrowser('/admin/settings');
    await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
    const days = page.getByLabel('Updates continue after a license ends (days)');
    expect(await days.inputValue()).toBe('0');
    await days.fill('366');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.locator('[role=alert][data-code]').first().waitFor();
    expect(await alertCode()).toBe('rest_invalid_param');
    expect(await grace()).toBe(0);
    await days.fill('14');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('The settings are saved.').waitFor();
    expect(await grace()).toBe(14);
  });
});
