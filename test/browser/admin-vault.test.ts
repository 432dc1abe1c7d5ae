import { describe, expect, it } from 'vitest';
import { makeZip } from '../helpers/factories.js';
import { waitFor } from '../helpers/wait.js';
import { skipBrowserTests } from './chromium.js';
import {
  alertCode,
  api,
  expectAccessible,
  expectNoSidewaysScroll,
  NARROW,
  OWNER,
  page,
  server,
  session,
  setUpConsole,
  shot,
  signInInBrowser,
  WIDE,
} from './console.js';

/**
 * The console's vault screens (docs/admin.md): deleting a release's file through the preview, its
 * fingerprint and the typed acknowledgement, the Storage screen and its key rotation, and editing
 * tax rates and shipping zones; each change seen in the audit trail. The harness is
 * test/browser/console.ts.
 */

/** Uploads a release through the API (multipart, as a script or CI would). */
async function uploadRelease(productId: number, version: string): Promise<{ version_id: number }> {
  const form = new FormData();
  form.append('version', version);
  form.append('file', new Blob([makeZip(20_000)], { type: 'application/zip' }), `vault-${version}.zip`);
  const res = await fetch(`${server.url}/v1/software/products/${productId}/versions`, {
    method: 'POST',
    headers: { cookie: session.cookie, 'x-rest-nonce': session.nonce },
    body: form,
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as { version_id: number };
}

interface AuditEvent {
  actor: { email: string };
  entity_type: string;
  entity_id: number;
  action: string;
  changes: Record<string, { before: unknown; after: unknown }>;
}
const audit = async (type: string) =>
  (await api<AuditEvent[]>('GET', `/audit-events?entity_type=${type}`)).body;

describe.skipIf(skipBrowserTests)("the console's vault screens in a real browser", () => {
  setUpConsole();

  let productId = 0;
  let first = 0;

  it('deletes a release file: preview with its fingerprint, the typed acknowledgement, the job; audited', async () => {
    const product = await api<{ id: number }>('POST', '/products', { name: 'Vault Pro', price: '10.00' });
    expect(product.status).toBe(201);
    productId = product.body.id;
    expect(
      (
        await api('POST', `/software/products/${productId}/config`, {
          slug: 'vault-pro',
          software_enabled: 'yes',
        })
      ).status,
    ).toBe(200);
    first = (await uploadRelease(productId, '1.0.0')).version_id;
    await uploadRelease(productId, '1.1.0');

    await signInInBrowser(`/admin/products/${productId}/releases`);
    await page.getByRole('heading', { level: 1, name: 'Releases of Vault Pro' }).waitFor();
    const opener = page.getByRole('button', { name: 'Delete file of 1.0.0' });
    await opener.click();
    const panel = page.getByRole('region', { name: 'Delete the file of version 1.0.0' });
    await panel.getByTestId('fingerprint').waitFor();
    const preview = (
      await api<{ fingerprint: string; acknowledgement: string }>(
        'POST',
        `/software/products/${productId}/artifact-deletions/preview`,
        { release_ids: [first] },
      )
    ).body;
    expect(await panel.getByTestId('fingerprint').textContent()).toBe(preview.fingerprint);
    expect(await panel.locator('.ack').textContent()).toBe(preview.acknowledgement);

    // The delete button waits for the exact sentence.
    const confirm = panel.getByRole('button', { name: 'Delete file for good' });
    const ack = panel.getByLabel(/To confirm, type/);
    await ack.fill('delete it');
    expect(await confirm.isDisabled()).toBe(true);
    await ack.fill(preview.acknowledgement);
    expect(await confirm.isEnabled()).toBe(true);
    await expectAccessible('artifact deletion preview at 1280 px');
    await shot('artifact-deletion-1280');
    await page.setViewportSize(NARROW);
    await expectAccessible('artifact deletion preview at 390 px');
    await expectNoSidewaysScroll('artifact deletion preview at 390 px');
    await shot('artifact-deletion-390');
    await page.setViewportSize(WIDE);

    // A change since the preview (1.0.0 made current again) makes it stale: refused, with its code.
    expect(
      (await api('PUT', `/software/products/${productId}/versions/${first}`, { is_current: true })).status,
    ).toBe(200);
    await confirm.click();
    await waitFor(async () => (await alertCode()) === 'deletion_preview_stale', 'a stale preview is refused');
    await panel.getByRole('button', { name: 'Preview again' }).click();
    await waitFor(
      async () => (await panel.getByTestId('fingerprint').textContent()) !== preview.fingerprint,
      'a fresh preview',
    );
    const fresh = (
      await api<{ acknowledgement: string }>(
        'POST',
        `/software/products/${productId}/artifact-deletions/preview`,
        { release_ids: [first] },
      )
    ).body;
    await ack.fill(fresh.acknowledgement);
    await confirm.click();
    await panel.locator('[data-status=completed]').waitFor();

    const after = (
      await api<{ releases: { version_id: number; status: string }[] }>(
        'GET',
        `/software/products/${productId}/versions`,
      )
    ).body.releases;
    expect(after.find((r) => r.version_id === first)?.status).toBe('withdrawn');
    // Closing returns the focus to the button that opened the deletion; now gone, to the list.
    await panel.getByRole('button', { name: 'Close' }).click();
    expect(await page.evaluate('document.activeElement?.textContent')).toBe('All releases');

    // Said in words, and the release whose file is gone offers neither Publish nor Delete file.
    await page.getByText('Deleted the file of 1.0.0.').first().waitFor();
    await page
      .getByRole('button', { name: 'Publish 1.1.0' })
      .or(page.getByRole('button', { name: 'Withdraw 1.1.0' }))
      .first()
      .waitFor();
    expect(await page.getByRole('button', { name: 'Delete file of 1.0.0' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Publish 1.0.0' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Delete file of 1.1.0' }).count()).toBe(1);

    // The Audit screen shows the deletion.
    const [deleted] = await audit('artifact');
    expect(deleted).toMatchObject({
      action: 'delete',
      actor: { email: OWNER.email },
      changes: { state: { before: 'available', after: 'delete_pending' } },
    });
    await page.goto(`${server.url}/admin/audit?entity_type=artifact`);
    await page.getByRole('heading', { level: 1, name: 'Audit' }).waitFor();
    await page.getByRole('cell', { name: 'Deleted', exact: true }).first().waitFor();
    await page.getByText('State: available → delete_pending').first().waitFor();
  }, 120_000);

  it('storage: status, and key rotation after confirmation with its outcome; accessible at both widths', async () => {
    // An encrypted release, so that the store has a key (generated on the first encrypted upload).
    const sealed = await api<{ id: number }>('POST', '/products', { name: 'Sealed', price: '5.00' });
    expect(
      (
        await api('POST', `/software/products/${sealed.body.id}/config`, {
          slug: 'sealed',
          software_enabled: 'yes',
          storage_driver: 'local_encrypted',
        })
      ).status,
    ).toBe(200);
    await uploadRelease(sealed.body.id, '2.0.0');
    await page.goto(`${server.url}/admin/storage`);
    await page.getByRole('heading', { level: 1, name: 'Storage' }).waitFor();
    await page.getByRole('heading', { level: 2, name: 'Vault' }).waitFor();
    const status = (
      await api<{ vault: { path: string }; encryption: { key_id: string } }>(
        'GET',
        '/software/storage/status',
      )
    ).body;
    expect(status.encryption.key_id).toMatch(/^[0-9a-f]+$/);
    await page.getByText(status.vault.path, { exact: true }).waitFor();
    await page.getByText(status.encryption.key_id, { exact: true }).waitFor();

    await page.getByRole('button', { name: 'Re-seal with the current key' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    // Cancel first: nothing is sent.
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('button', { name: 'Re-seal with the current key' }).click();
    const rotated = page.waitForResponse((r) => r.url().endsWith('/v1/software/storage/rotate-key'));
    await dialog.getByRole('button', { name: 'Re-seal', exact: true }).click();
    expect((await rotated).status()).toBe(200);
    // Every file and secret of this store was sealed with its one key: nothing to do.
    await page.getByText('Every file and secret was already sealed with the current key').waitFor();
    expect(await page.getByTestId('secrets-on-previous-keys').textContent()).toBe('0');

    for (const viewport of [WIDE, NARROW]) {
      await page.setViewportSize(viewport);
      await expectAccessible(`storage at ${viewport.width} px`);
      await expectNoSidewaysScroll(`storage at ${viewport.width} px`);
      await shot(`storage-${viewport.width}`);
    }
    await page.setViewportSize(WIDE);
  }, 60_000);

  it('edits a tax rate and a shipping zone; a refusal is shown on its field; both audited', async () => {
    const rate = await api<{ id: number }>('POST', '/tax-rates', { country: 'DE', rate: '19', name: 'MwSt' });
    expect(rate.status).toBe(201);
    await page.goto(`${server.url}/admin/tax-rates`);
    await page.getByRole('heading', { level: 1, name: 'Tax rates' }).waitFor();
    await page.getByRole('button', { name: 'Edit MwSt' }).click();
    await page.getByRole('heading', { level: 2, name: 'Edit the tax rate “MwSt”' }).waitFor();
    expect(await page.getByLabel('Rate (%)').inputValue()).toBe('19.0000');
    await page.getByLabel('Rate (%)').fill('250');
    await page.getByRole('button', { name: 'Save tax rate' }).click();
    await waitFor(async () => (await alertCode()) === 'invalid_tax_rate', 'a rate over 100 is refused');
    await page.getByLabel('Rate (%)').fill('7');
    await page.getByLabel('Name').fill('MwSt reduced');
    await page.getByRole('button', { name: 'Save tax rate' }).click();
    await page.getByRole('heading', { level: 2, name: 'New tax rate' }).waitFor();
    await page.getByText('“MwSt reduced” is saved.').waitFor();
    const rates = (await api<{ id: number; name: string; rate: string }[]>('GET', '/tax-rates')).body;
    expect(rates.find((r) => r.id === rate.body.id)).toMatchObject({ name: 'MwSt reduced', rate: '7.0000' });
    const [rateEvent] = await audit('tax_rate');
    expect(rateEvent).toMatchObject({
      entity_id: rate.body.id,
      action: 'update',
      changes: {
        rate: { before: '19.0000', after: '7.0000' },
        name: { before: 'MwSt', after: 'MwSt reduced' },
      },
    });
    await expectAccessible('tax rates while editing');

    const zone = await api<{ id: number }>('POST', '/shipping-zones', {
      name: 'Nordics',
      regions: [{ country: 'SE' }],
      methods: [{ method_id: 'flat_rate', title: 'Post', cost: '5' }],
    });
    expect(zone.status).toBe(201);
    await page.goto(`${server.url}/admin/shipping-zones`);
    await page.getByRole('heading', { level: 1, name: 'Shipping zones' }).waitFor();
    await page.getByRole('button', { name: 'Edit Nordics' }).click();
    await page.getByRole('heading', { level: 2, name: 'Edit the shipping zone “Nordics”' }).waitFor();
    expect(await page.getByLabel('Regions').inputValue()).toBe('SE');
    await page.getByLabel('Regions').fill('SE, NO, QQ');
    await page.getByRole('button', { name: 'Save shipping zone' }).click();
    await waitFor(async () => (await alertCode()) === 'invalid_country', 'an unknown country is refused');
    await page.getByLabel('Regions').fill('SE, NO, DK');
    await page.getByLabel('Cost (optional)').fill('6.50');
    await page.getByRole('button', { name: 'Save shipping zone' }).click();
    await page.getByText('“Nordics” is saved.').waitFor();
    const zones = (
      await api<{ id: number; regions: { country: string }[]; methods: { cost: string | null }[] }[]>(
        'GET',
        '/shipping-zones',
      )
    ).body;
    const saved = zones.find((z) => z.id === zone.body.id)!;
    expect(saved.regions.map((r) => r.country)).toEqual(['SE', 'NO', 'DK']);
    expect(saved.methods[0]!.cost).toBe('6.50');
    const [zoneEvent] = await audit('shipping_zone');
    expect(zoneEvent).toMatchObject({ entity_id: zone.body.id, action: 'update' });
    expect(Object.keys(zoneEvent!.changes).sort()).toEqual(['methods', 'regions']);

    await page.setViewportSize(NARROW);
    await page.getByRole('button', { name: 'Edit Nordics' }).click();
    await expectAccessible('shipping zones while editing at 390 px');
    await expectNoSidewaysScroll('shipping zones while editing at 390 px');
    await page.getByRole('button', { name: 'Cancel editing' }).click();
    await page.getByRole('heading', { level: 2, name: 'New shipping zone' }).waitFor();
    await page.setViewportSize(WIDE);
  }, 90_000);
});
