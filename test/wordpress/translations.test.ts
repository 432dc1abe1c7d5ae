import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { POT, potFile } from '../../scripts/wordpress-pot.js';

/**
 * The WordPress SDK's translation template (sdk/wordpress/languages/tollgate-updater.pot) is made
 * from the SDK's own calls by scripts/wordpress-pot.ts, which reads the PHP with PHP's tokenizer.
 * Loading a translation in WordPress is shown in updater.test.ts, on a real site.
 */

let php = true;
try {
  execFileSync('php', ['-v'], { stdio: 'ignore' });
} catch {
  php = false;
}

describe.skipIf(!php && !process.env.CI)('the WordPress SDK translation template', () => {
  it("is the SDK's strings as they are (regenerate: node --import tsx scripts/wordpress-pot.ts)", () => {
    expect(readFileSync(POT, 'utf8')).toBe(potFile());
  });

  it("holds every sentence of the SDK once, its plurals and the translators' notes", () => {
    const pot = readFileSync(POT, 'utf8');
    const ids = [...pot.matchAll(/^msgid "(.+)"$/gm)].map((m) => m[1]);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBeGreaterThan(40);
    expect(pot).toMatch(/^msgid_plural ".*%d minutes\."$/m);
    // Every string with a placeholder says what it stands for.
    for (const block of pot.split('\n\n').filter((b) => /#, php-format/.test(b))) {
      expect(block).toMatch(/^#\. translators: /m);
    }
  });
});
