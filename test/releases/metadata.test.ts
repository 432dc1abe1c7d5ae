import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readPackage, ZipHeaderScanner } from '../../src/modules/releases/wp-headers.js';
import { call, pkg, protectedFixture } from '../distribution/helpers.js';
import { admin, adminOk, createTestApp, expectError, setSettings, type TestApp } from '../helpers/app.js';
import { publish, softwareProduct } from '../helpers/factories.js';
import { pluginHeader, zipOf, zipParts } from '../helpers/zip.js';

// What WordPress shows of a release (docs/releases.md, 'Metadata WordPress shows';
// docs/distribution.md, 'Release metadata').

/** The metadata read from a zip fed in chunks of `size` bytes (as an upload streams). */
async function metadataOf(zip: Buffer, size = 65536) {
  const scanner = new ZipHeaderScanner();
  for (let i = 0; i < zip.length; i += size) scanner.push(zip.subarray(i, i + size));
  return (await readPackage(scanner.captures)).metadata;
}

const ACME = pluginHeader({
  'Plugin Name': 'Acme Widget',
  'Plugin URI': 'https://acme.example/widget',
  Description: 'Widgets, done well.',
  Version: '1.1.0',
  Author: 'Acme Ltd',
  'Requires at least': '6.1',
  'Requires PHP': '8.0',
});
const README =
  '=== Acme Widget ===\nContributors: acme\nTested up to: 6.4\nRequires at least: 5.0\nStable tag: 1.1.0\n';

describe('reading the headers of a zip', () => {
  it('a plugin: the main file header, readme.txt filling Tested up to', async () => {
    const zip = Buffer.concat([
      ...zipParts([
        { name: 'acme-widget/', data: Buffer.alloc(0) },
        { name: 'acme-widget/acme-widget.php', data: Buffer.from(ACME) },
        { name: 'acme-widget/readme.txt', data: Buffer.from(README) },
      ]),
    ]);
    expect(await metadataOf(zip)).toEqual({
      name: 'Acme Widget',
      description: 'Widgets, done well.',
      homepage: 'https://acme.example/widget',
      author: 'Acme Ltd',
      requires: '6.1',
      tested: '6.4',
      requires_php: '8.0',
    });
  });

  it('deflated entries with data descriptors, in chunks of any size, read the same', async () => {
    const zip = zipOf([
      {
        name: 'acme-widget/assets/logo.bin',
        data: Buffer.alloc(100_000, 7),
        deflate: true,
        descriptor: true,
      },
      { name: 'acme-widget/acme-widget.php', data: ACME, deflate: true, descriptor: true },
      { name: 'acme-widget/readme.txt', data: README, deflate: true },
    ]);
    const expected = await metadataOf(zip);
    expect(expected).toMatchObject({
      name: 'Acme Widget',
      requires: '6.1',
      tested: '6.4',
      requires_php: '8.0',
    });
    for (const size of [1, 3, 7, 4096]) expect(await metadataOf(zip, size)).toEqual(expected);
  });

  it('a theme: style.css', async () => {
    const css = `/*\nTheme Name: Acme Theme\nTheme URI: https://acme.example/theme\nAuthor: Acme Ltd\nDescription: A calm theme.\nRequires at least: 6.0\nTested up to: 6.4\nRequires PHP: 7.4\n*/\nbody{}`;
    const zip = zipOf([
      { name: 'acme-theme/functions.php', data: '<?php\n// no header\n', deflate: true },
      { name: 'acme-theme/style.css', data: css, deflate: true },
    ]);
    expect(await metadataOf(zip)).toEqual({
      name: 'Acme Theme',
      description: 'A calm theme.',
      homepage: 'https://acme.example/theme',
      author: 'Acme Ltd',
      requires: '6.0',
      tested: '6.4',
      requires_php: '7.4',
    });
  });

  it("WordPress's rules: header lines anywhere in the first 8 KiB, values trimmed and cut at */", async () => {
    const php = `<?php\r\n/*\r\nPlugin Name:    Spaced Out   \r\n# Requires PHP: 7.4 */\r\n*/`;
    expect(await metadataOf(zipOf([{ name: 'spaced.php', data: php }]))).toMatchObject({
      name: 'Spaced Out',
      requires_php: '7.4',
    });
    const late = `<?php\n/* Plugin Name: Early */\n${' '.repeat(9000)}\n/* Requires PHP: 8.1 */`;
    const m = await metadataOf(zipOf([{ name: 'late/late.php', data: late, deflate: true }]));
    expect(m).toMatchObject({ name: 'Early', requires_php: null });
  });

  it('no WordPress header: every field null', async () => {
    const zip = zipOf([
      { name: 'app/bin/run.js', data: 'console.log(1)' },
      { name: 'app/index.php', data: '<?php echo 1;' },
    ]);
    expect(Object.values(await metadataOf(zip)).every((v) => v === null)).toBe(true);
  });

  it('the file named after its folder is the main one; readme next to it first', async () => {
    const zip = zipOf([
      { name: 'acme/zz-addon.php', data: pluginHeader({ 'Plugin Name': 'Add-on', 'Requires PHP': '7.0' }) },
      { name: 'acme/acme.php', data: pluginHeader({ 'Plugin Name': 'Acme' }) },
      { name: 'readme.txt', data: 'Tested up to: 5.0\n' },
      { name: 'acme/readme.txt', data: 'Tested up to: 6.2\n' },
    ]);
    expect(await metadataOf(zip)).toMatchObject({ name: 'Acme', requires_php: null, tested: '6.2' });
  });

  it('hostile zips: traversal names, bad values, a bomb and many entries hurt nothing', async () => {
    const evil = pluginHeader({ 'Plugin Name': 'Evil' });
    const traversal = zipOf([
      { name: '../evil.php', data: evil },
      { name: '/evil.php', data: evil },
      { name: 'a\\evil.php', data: evil },
      { name: 'x/y/evil.php', data: evil },
    ]);
    expect((await metadataOf(traversal)).name).toBeNull();

    const bad = pluginHeader({
      'Plugin Name': `Bad\u0007Name ${'x'.repeat(400)}`,
      'Plugin URI': 'javascript:alert(1)',
      Author: '<script>alert(1)</script>',
      'Requires at least': '6.1; DROP TABLE releases',
      'Requires PHP': '99999.1',
    });
    const m = await metadataOf(zipOf([{ name: 'bad/bad.php', data: bad }]));
    expect(m.name).toHaveLength(200);
    expect(m.name).not.toContain('\u0007');
    expect(m).toMatchObject({ homepage: null, requires: null, requires_php: null });
    // Text is kept as text: the answers are JSON, and whoever shows it escapes it.
    expect(m.author).toBe('<script>alert(1)</script>');

    // 64 MB of spaces after the header deflate to about 64 KB: only the first 8 KiB are inflated.
    const bomb = Buffer.concat([
      Buffer.from(pluginHeader({ 'Plugin Name': 'Bomb' })),
      Buffer.alloc(64 << 20, 32),
    ]);
    const bombZip = zipOf([{ name: 'bomb/bomb.php', data: bomb, deflate: true, descriptor: true }]);
    // Measured from here: what building the zip in the test took is not the server's.
    const started = process.memoryUsage().rss;
    const b = await metadataOf(bombZip);
    expect(b.name).toBe('Bomb');
    expect(process.memoryUsage().rss - started).toBeLessThan(48 << 20);

    const many = zipOf([
      ...Array.from({ length: 5000 }, (_, i) => ({ name: `many/lib/f${i}.txt`, data: 'x' })),
      { name: 'many/many.php', data: pluginHeader({ 'Plugin Name': 'Many' }) },
    ]);
    expect((await metadataOf(many)).name).toBe('Many');
  });

  it('a stream that is no zip, or is cut off, gives nothing and never throws', async () => {
    expect((await metadataOf(Buffer.from('not a zip at all'))).name).toBeNull();
    const zip = zipOf([{ name: 'cut/cut.php', data: ACME, deflate: true }]);
    expect((await metadataOf(zip.subarray(0, 40))).name).toBeNull();
  });
});

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
  await setSettings(t, { rate_limit: 100 });
});
afterAll(async () => t.close());

const pluginZip = (fields: Record<string, string>, readme = '') =>
  zipOf([
    { name: 'acme/acme.php', data: pluginHeader(fields), deflate: true },
    ...(readme ? [{ name: 'acme/readme.txt', data: readme }] : []),
  ]);

const FIELDS = ['requires', 'tested', 'requires_php', 'name', 'description', 'homepage', 'author'] as const;

describe('releases: read at upload, edited by the administrator', () => {
  it('an upload stores what its zip says; the list shows it', async () => {
    const product = await softwareProduct(t);
    const r = await publish(
      t,
      product.id,
      '1.0.0',
      [],
      pluginZip({ 'Plugin Name': 'Acme', Version: '1.0.0', 'Requires at least': '6.1' }, README),
    );
    expect(r).toMatchObject({
      name: 'Acme',
      requires: '6.1',
      tested: '6.4',
      requires_php: null,
      homepage: null,
    });
    const list = await adminOk<{ releases: Record<string, unknown>[] }>(
      t,
      'GET',
      `/software/products/${product.id}/versions`,
    );
    expect(list.releases[0]).toMatchObject({ name: 'Acme', requires: '6.1', tested: '6.4' });
  });

  it('PUT edits and clears the fields', async () => {
    const product = await softwareProduct(t);
    const r = await publish(t, product.id, '1.0.0');
    const url = `/software/products/${product.id}/versions/${r.version_id}`;
    const edit = {
      requires: '6.1',
      tested: '6.4.2',
      requires_php: '8.0',
      name: 'Acme Widget',
      description: 'Widgets.',
      homepage: 'http://acme.example/widget',
      author: 'Acme Ltd',
    };
    expect(await adminOk(t, 'PUT', url, edit)).toMatchObject(edit);
    const cleared = await adminOk(t, 'PUT', url, { tested: null, author: null });
    expect(cleared).toMatchObject({ ...edit, tested: null, author: null });
  });

  it('bad input: a specific 400 and nothing changed', async () => {
    const product = await softwareProduct(t);
    const r = await publish(t, product.id, '1.0.0');
    const url = `/software/products/${product.id}/versions/${r.version_id}`;
    const before = await adminOk(t, 'PUT', url, {
      requires: '6.1',
      name: 'Acme',
      homepage: 'https://acme.example',
    });
    const bad: Record<string, unknown[]> = {
      requires: [6.1, true, [], {}, '6.1 beta', '6..1', ' 6.1', 'v6', '1.2.3.4.5', '9'.repeat(21)],
      tested: [64, '6.4-RC1', ''],
      requires_php: [8, '8.x', '<8'],
      name: [1, '', 'a'.repeat(201), 'two\nlines', ' padded', 'tab\there'],
      description: [false, 'd'.repeat(2001), 'nul\u0000'],
      homepage: [
        1,
        'javascript:alert(1)',
        'ftp://acme.example',
        'acme.example',
        'https://user:pass@acme.example/',
        `https://acme.example/${'p'.repeat(2000)}`,
        'https://acme.example/a b',
      ],
      author: [{}, 'x'.repeat(201), 'cr\r'],
    };
    for (const [field, values] of Object.entries(bad)) {
      for (const value of values) {
        const res = await admin(t, 'PUT', url, { [field]: value });
        const expected = field === 'description' && value === 'nul\u0000' ? null : 'invalid_release_metadata';
        if (expected) expectError(res, 400, expected);
        else expect(res.statusCode, `${field}=${JSON.stringify(value)}`).toBe(400);
      }
    }
    expectError(await admin(t, 'PUT', url, { requires_wp: '6.1' }), 400, 'invalid_parameters');
    expectError(await admin(t, 'PUT', url, { name: 'ok', icons: {} }), 400, 'invalid_parameters');
    const malformed = await t.app.inject({
      method: 'PUT',
      url: `/v1${url}`,
      headers: { ...t.adminAuth, 'content-type': 'application/json' },
      payload: '{"name":',
    });
    expectError(malformed, 400, 'rest_invalid_json');
    const after = await adminOk<{ releases: Record<string, unknown>[] }>(
      t,
      'GET',
      `/software/products/${product.id}/versions`,
    );
    for (const f of FIELDS) expect(after.releases[0]![f], f).toEqual((before as Record<string, unknown>)[f]);
  });

  it('anonymous: 401 before the body is read', async () => {
    const product = await softwareProduct(t);
    const r = await publish(t, product.id, '1.0.0');
    const res = await t.app.inject({
      method: 'PUT',
      url: `/v1/software/products/${product.id}/versions/${r.version_id}`,
      payload: { name: 5 },
    });
    expect(res.statusCode).toBe(401);
  });
});

describe('the answers carry the metadata of the release offered', () => {
  it('check, package and changelog', async () => {
    const f = await protectedFixture(t, {
      zip: pluginZip(
        { 'Plugin Name': 'Acme', Version: '1.0.0', 'Requires at least': '5.0', 'Requires PHP': '7.4' },
        'Tested up to: 6.0\n',
      ),
    });
    const v11 = await publish(
      t,
      f.product.id,
      '1.1.0',
      [],
      pluginZip(
        {
          'Plugin Name': 'Acme Pro',
          Version: '1.1.0',
          Description: 'More widgets.',
          'Plugin URI': 'https://acme.example/pro',
          Author: 'Acme Ltd',
          'Requires at least': '6.1',
          'Requires PHP': '8.0',
        },
        'Tested up to: 6.4\n',
      ),
    );
    const offered = {
      name: 'Acme Pro',
      description: 'More widgets.',
      homepage: 'https://acme.example/pro',
      author: 'Acme Ltd',
      requires: '6.1',
      tested: '6.4',
      requires_php: '8.0',
    };
    const check = await call(t, 'POST', '/software/check', { slug: f.slug, version: '1.0.0', ...f.creds });
    expect(check.json()).toMatchObject({ available_version: '1.1.0', ...offered });
    const update = await pkg(t, { slug: f.slug, purpose: 'update', current_version: '1.0.0', ...f.creds });
    expect(update.json()).toMatchObject({ version: '1.1.0', ...offered });

    const log = (await call(t, 'GET', `/software/changelog?slug=${f.slug}`)).json();
    expect(log.versions).toMatchObject([
      { version: '1.1.0', ...offered },
      { version: '1.0.0', name: 'Acme', requires: '5.0', tested: '6.0', requires_php: '7.4', homepage: null },
    ]);

    // An edit is seen by the next check (the issuance cache follows release changes).
    await adminOk(t, 'PUT', `/software/products/${f.product.id}/versions/${v11.version_id}`, {
      tested: '6.5',
      name: null,
    });
    const edited = await call(t, 'POST', '/software/check', { slug: f.slug, version: '1.0.0', ...f.creds });
    // Without a name of its own the release is named after the product.
    expect(edited.json()).toMatchObject({ tested: '6.5', name: f.product.name });

    // Up to date: nothing is offered, so nothing is described but the product's name.
    const current = await call(t, 'POST', '/software/check', { slug: f.slug, version: '1.1.0', ...f.creds });
    expect(current.json()).toMatchObject({
      available: false,
      name: f.product.name,
      requires: null,
      tested: null,
    });
  });
});
