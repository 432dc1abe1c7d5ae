/**
 * bench/literals: what an object literal that spreads another object and then adds properties
 * costs, against the same object written out, for the three hot-path files whose code avoids it
 * (docs/development.md, 'Hot paths'):
 *
 * - `entitlements`: src/modules/licensing/entitlements.ts, the rights of one validate (12 fields
 *   added to a spread of 3);
 * - `license row`: src/modules/licensing/license.repository.ts `asRecord`, an 18-column row with
 *   one field changed (a spread copy, against setting the field on the row; both build the row);
 * - `token row`: src/modules/distribution/tokens.ts `mint`, a 19-column insert with 6 fields
 *   spread in the middle.
 *
 *   taskset -c 1 node --import tsx bench/literals.ts [--rounds 5]
 *
 * Prints nanoseconds an object for each way, in alternation within every round, and the median
 * ratio of spread to written out (the machine is shared: compare ratios, not absolute figures).
 */

import { parseArgs } from 'node:util';
import { rowBuilder } from '../src/db/database.js';

const { values: args } = parseArgs({ options: { rounds: { type: 'string', default: '5' } } });
const ROUNDS = Number(args.rounds);
const REPS = 10_000;

const kept: unknown[] = new Array(1024).fill(null);
let i = 0;
const keep = (o: unknown) => {
  kept[i++ & 1023] = o;
};

const common = { policy_mode: 'legacy', policy_valid: true, policy_error: null as string | null };
/** A license row as SQLite rows arrive (src/db/database.ts): 17 columns and the count. */
const licenseRow = rowBuilder([...Array.from({ length: 17 }, (_, k) => `column_${k}`), 'activation_count']);
const rowValues = [...Array.from({ length: 17 }, (_, k) => k), '2'];
const grant = { id: 7, activation: 9, revision: 3, key: 'k', installation: 'i', domain: 'example.com' };

type Way = (n: number) => unknown;
const cases: Record<string, { spread: Way; written: Way }> = {
  entitlements: {
    spread: (n) =>
      keep({
        ...common,
        update_entitled: true,
        support_active: n > 0,
        updates_expires_at: null,
        support_expires_at: null,
        historical_downloads: 'all',
        history_access: 'all',
        updates_mode: 'perpetual',
        support_mode: 'none',
        issued_at: '2026-11-24T10:00:00.000Z',
        status: 'valid',
        activations: n,
        limit: 3,
      }),
    written: (n) =>
      keep({
        policy_mode: common.policy_mode,
        policy_valid: common.policy_valid,
        policy_error: common.policy_error,
        update_entitled: true,
        support_active: n > 0,
        updates_expires_at: null,
        support_expires_at: null,
        historical_downloads: 'all',
        history_access: 'all',
        updates_mode: 'perpetual',
        support_mode: 'none',
        issued_at: '2026-11-24T10:00:00.000Z',
        status: 'valid',
        activations: n,
        limit: 3,
      }),
  },
  'license row': {
    spread: (n) => {
      const row = licenseRow(rowValues);
      keep({ ...row, activation_count: Number(row.activation_count) + n });
    },
    written: (n) => {
      const row = licenseRow(rowValues);
      row.activation_count = Number(row.activation_count) + n;
      keep(row);
    },
  },
  'token row': {
    spread: (n) => {
      const bound = {
        license_id: grant.id,
        activation_id: grant.activation,
        activation_revision: grant.revision,
        identity_key: grant.key,
        installation_id: grant.installation,
        domain_normalized: grant.domain,
      };
      keep({
        token_hash: 'h',
        binding_version: 2,
        policy: 'protected',
        product_id: n,
        release_id: 1,
        artifact_id: 1,
        artifact_sha256: 's',
        purpose: 'update',
        ...bound,
        created_at: 'c',
        expires_at: 'e',
        used_at: null,
        revoked_at: null,
        download_count: 0,
      });
    },
    written: (n) =>
      keep({
        token_hash: 'h',
        binding_version: 2,
        policy: 'protected',
        product_id: n,
        release_id: 1,
        artifact_id: 1,
        artifact_sha256: 's',
        purpose: 'update',
        license_id: grant.id,
        activation_id: grant.activation,
        activation_revision: grant.revision,
        identity_key: grant.key,
        installation_id: grant.installation,
        domain_normalized: grant.domain,
        created_at: 'c',
        expires_at: 'e',
        used_at: null,
        revoked_at: null,
        download_count: 0,
      }),
  },
};

function time(way: Way): number {
  const started = process.hrtime.bigint();
  for (let n = 0; n < REPS; n++) way(n);
  return Number(process.hrtime.bigint() - started) / REPS;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const [name, { spread, written }] of Object.entries(cases)) {
  time(spread); // warm-up
  time(written);
  const ratios: number[] = [];
  const rounds: string[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const s = time(spread);
    const w = time(written);
    ratios.push(s / w);
    rounds.push(`${s.toFixed(0)}/${w.toFixed(0)}`);
  }
  console.log(
    `${name}: spread/written out ns ${rounds.join(', ')}; median ratio ${median(ratios).toFixed(1)}x`,
  );
}
