import { deflateRawSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminOk, createTestApp, expectError, type TestApp } from '../helpers/app.js';
import { makeZip, publish, softwareProduct, uploadRelease } from '../helpers/factories.js';
import { pluginHeader, pluginZip, themeZip, zipOf } from '../helpers/zip.js';
import { hashOf, snapshot } from './helpers.js';

// A release is what its zip says (docs/releases.md, 'The version is the zip's' and 'Duplicates').

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t?.close());

interface ErrorBody {
  code: string;
  data: Record<string, unknown>;
}

/** The upload refused with `status` `code`, leaving no release, artifact, vault or staging file behind. */
async function refused(
  productId: number,
  version: string,
  zip: Buffer,
  status: number,
  code: string,
  extra: [string, string][] = [],
): Promise<ErrorBody> {
  const before = await snapshot(t);
  const res = await uploadRelease(t, productId, version, extra, zip);
  expectError(res, status, code);
  expect(await snapshot(t)).toEqual(before);
  expect(before.staging).toEqual([]);
  return res.json() as ErrorBody;
}

describe("the version given is the zip's header version", () => {
  it('a plugin whose main file says the version given is published', async () => {
    const product = await softwareProduct(t);
    const r = await publish(t, product.id, '1.0.0', [], pluginZip('1.0.0'));
    expect(r).toMatchObject({ version: '1.0.0', status: 'published' });
  });

  it('a theme whose style.css says the version given is published', async () => {
    const product = await softwareProduct(t);
    expect(await publish(t, product.id, '2.3.1', [], themeZip('2.3.1'))).toMatchObject({ version: '2.3.1' });
  });

  it("equal as PHP's version_compare says: 1.0-rc1 is 1.0rc1, but 1.0 is not 1.0.0", async () => {
    const product = await softwareProduct(t);
    await publish(t, product.id, '1.0-rc1', [], pluginZip('1.0rc1'));
    const body = await refused(product.id, '1.0', pluginZip('1.0.0'), 400, 'release_version_mismatch');
    expect(body.data).toMatchObject({ version: '1.0', header_version: '1.0.0', header: 'plugin' });
  });

  it('a plugin whose header says another version is refused 400 release_version_mismatch, naming both', async () => {
    const product = await softwareProduct(t);
    const body = await refused(product.id, '1.0.1', pluginZip('1.0.0'), 400, 'release_version_mismatch');
    expect(body.data).toMatchObject({
      status: 400,
      version: '1.0.1',
      header_version: '1.0.0',
      header: 'plugin',
      header_file: 'acme-widget/acme-widget.php',
    });
  });

  it('a theme whose style.css says another version is refused', async () => {
    const product = await softwareProduct(t);
    const body = await refused(product.id, '2.0.0', themeZip('1.9.0'), 400, 'release_version_mismatch');
    expect(body.data).toMatchObject({
      header_version: '1.9.0',
      header: 'theme',
      header_file: 'acme-theme/style.css',
    });
  });

  it('a plugin header without Version (WordPress reads the empty version) is refused', async () => {
    const product = await softwareProduct(t);
    const zip = zipOf([{ name: 'bare/bare.php', data: pluginHeader({ 'Plugin Name': 'Bare' }) }]);
    const body = await refused(product.id, '1.0.0', zip, 400, 'release_version_mismatch');
    expect(body.data).toMatchObject({ version: '1.0.0', header_version: null });
  });

  it('a zip without a plugin or theme header (a Node app) is not checked', async () => {
    const product = await softwareProduct(t);
    const zip = zipOf([
      { name: 'app/package.json', data: '{"name":"app","version":"0.0.1"}', deflate: true },
      { name: 'app/index.js', data: 'console.log(1)\n' },
    ]);
    expect(await publish(t, product.id, '7.0.0', [], zip)).toMatchObject({ version: '7.0.0' });
  });
});

describe('version_override', () => {
  it('publishes a mismatch and records the override and both versions in the audit trail', async () => {
    const product = await softwareProduct(t);
    const r = await publish(t, product.id, '1.0.1', [['version_override', 'true']], pluginZip('1.0.0'));
    expect(r.version).toBe('1.0.1');
    const events = await adminOk<
      { action: string; changes: Record<string, { before: unknown; after: unknown }> }[]
    >(t, 'GET', `/audit-events?entity_type=release&entity_id=${r.version_id}`);
    const create = events.find((e) => e.action === 'create')!;
    expect(create.changes).toMatchObject({
      version: { before: null, after: '1.0.1' },
      version_override: { before: null, after: true },
      header_version: { before: null, after: '1.0.0' },
    });
  });

  it('takes 1 for true; an override that is not needed records nothing', async () => {
    const product = await softwareProduct(t);
    const a = await publish(t, product.id, '3.0.0', [['version_override', '1']], themeZip('2.9.9'));
    expect(a.version).toBe('3.0.0');
    const b = await publish(t, product.id, '3.0.1', [['version_override', 'true']], pluginZip('3.0.1'));
    const events = await adminOk<{ action: string; changes: Record<string, unknown> }[]>(
      t,
      'GET',
      `/audit-events?entity_type=release&entity_id=${b.version_id}`,
    );
    expect(events.find((e) => e.action === 'create')!.changes).not.toHaveProperty('version_override');
  });

  it('false or 0 does not override; any other value is 400 rest_invalid_param', async () => {
    const product = await softwareProduct(t);
    for (const v of ['false', '0']) {
      await refused(product.id, '1.0.1', pluginZip('1.0.0'), 400, 'release_version_mismatch', [
        ['version_override', v],
      ]);
    }
    await refused(product.id, '1.0.1', pluginZip('1.0.0'), 400, 'rest_invalid_param', [
      ['version_override', 'yes'],
    ]);
  });
});

describe('duplicate_artifact', () => {
  it("the bytes of an existing release of the product are refused 409, naming that release; another product's are not", async () => {
    const product = await softwareProduct(t);
    const zip = makeZip();
    const first = await publish(t, product.id, '1.0.0', [], zip);
    const body = await refused(product.id, '1.0.1', zip, 409, 'duplicate_artifact');
    expect(body.data).toEqual({ status: 409, release_id: first.version_id, version: '1.0.0' });
    // Withdrawn, the release still owns the file.
    await adminOk(t, 'POST', `/software/products/${product.id}/versions/${first.version_id}/withdraw`, {});
    await refused(product.id, '1.0.1', zip, 409, 'duplicate_artifact');
    const other = await softwareProduct(t);
    expect(await publish(t, other.id, '1.0.1', [], zip)).toMatchObject({ file_sha256: hashOf(zip) });
  });

  it('two uploads of the same new bytes at once: one is published, the other refused', async () => {
    const product = await softwareProduct(t);
    const zip = makeZip(20_000);
    const answers = await Promise.all(
      ['2.0.0', '2.0.1', '2.0.2'].map((v) => uploadRelease(t, product.id, v, [], zip)),
    );
    expect(answers.map((a) => a.statusCode).sort()).toEqual([201, 409, 409]);
    for (const a of answers.filter((x) => x.statusCode === 409)) expectError(a, 409, 'duplicate_artifact');
    const s = await snapshot(t);
    expect(s.artifacts.filter((a) => a.file_sha256 === hashOf(zip))).toHaveLength(1);
    expect(s.staging).toEqual([]);
  });
});

describe('hostile zips', () => {
  it('a truncated central directory is 400 invalid_archive', async () => {
    const product = await softwareProduct(t);
    const zip = pluginZip('1.0.0');
    await refused(product.id, '1.0.0', zip.subarray(0, zip.length - 30), 400, 'invalid_archive');
  });

  it('a header file that inflates to megabytes is read only for its first 8 KiB', async () => {
    const product = await softwareProduct(t);
    const php = Buffer.concat([
      Buffer.from(pluginHeader({ 'Plugin Name': 'Bomb', Version: '4.0.0' })),
      Buffer.alloc(50 * 1024 * 1024, 0x20),
    ]);
    expect(deflateRawSync(php).length).toBeLessThan(100_000);
    const zip = zipOf([{ name: 'bomb/bomb.php', data: php, deflate: true }]);
    await refused(product.id, '4.0.1', zip, 400, 'release_version_mismatch');
    expect(await publish(t, product.id, '4.0.0', [], zip)).toMatchObject({ version: '4.0.0' });
  });

  it('a header beyond 8 KiB, or in a file with a traversal name, is no header', async () => {
    const product = await softwareProduct(t);
    const late = `<?php\n${' '.repeat(9000)}\n/* Plugin Name: Late\nVersion: 9.9.9 */`;
    const zip = zipOf([
      { name: '../evil/evil.php', data: pluginHeader({ 'Plugin Name': 'Evil', Version: '9.9.9' }) },
      { name: 'a/../../b.php', data: pluginHeader({ 'Plugin Name': 'Evil', Version: '9.9.9' }) },
      { name: 'late/late.php', data: late, deflate: true },
    ]);
    expect(await publish(t, product.id, '5.0.0', [], zip)).toMatchObject({ version: '5.0.0' });
  });

  it('a huge Version line is refused with a bounded header_version', async () => {
    const product = await softwareProduct(t);
    const zip = zipOf([
      {
        name: 'huge/huge.php',
        data: pluginHeader({ 'Plugin Name': 'Huge', Version: `1.${'9'.repeat(7000)}` }),
      },
    ]);
    const body = await refused(product.id, '1.0.0', zip, 400, 'release_version_mismatch');
    expect(String(body.data.header_version).length).toBeLessThanOrEqual(80);
  });
});
