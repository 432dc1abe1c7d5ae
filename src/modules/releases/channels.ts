import { createHash } from 'node:crypto';
import type { ReleaseChannel } from './releases.tables.js';

/**
 * Release channels and staged rollouts (docs/distribution.md, 'Channels and staged rollouts'):
 * the channels from most to least stable, and the one rule that decides whether a site is inside
 * a release's rollout. Pure functions: nothing here reads the database or the clock.
 */
export const CHANNELS: readonly ReleaseChannel[] = ['stable', 'rc', 'beta', 'alpha'];

/** 0 for stable up to 3 for alpha: a site on channel c takes releases whose rank is at most c's. */
const RANK: Readonly<Record<ReleaseChannel, number>> = { stable: 0, rc: 1, beta: 2, alpha: 3 };

export const isChannel = (value: unknown): value is ReleaseChannel =>
  typeof value === 'string' && Object.hasOwn(RANK, value);

export const channelRank = (channel: ReleaseChannel): number => RANK[channel];

/** Whether a site on `site` may take a release of `release` (the same channel or a more stable one). */
export const channelAllows = (site: ReleaseChannel, release: ReleaseChannel): boolean =>
  RANK[release] <= RANK[site];

/** The least stable of the given channels (what a license limited to them may take at most). */
export function leastStable(channels: readonly ReleaseChannel[]): ReleaseChannel {
  let out: ReleaseChannel = 'stable';
  for (const c of channels) if (RANK[c] > RANK[out]) out = c;
  return out;
}

/**
 * The site's place in a release's rollout, 0 to 9999: the first 4 bytes of
 * SHA-256(`${releaseId}:${siteKey}`) as an unsigned 32-bit integer, modulo 10000. It never
 * changes for a site and a release, so a site inside at 10% stays inside at 50%; and it differs
 * between releases, so the same sites are not always the first.
 */
export function rolloutBucket(releaseId: number, siteKey: string): number {
  const digest = createHash('sha256').update(`${releaseId}:${siteKey}`).digest();
  return digest.readUInt32BE(0) % 10000;
}

/**
 * Whether a site is offered a release at `percent` (100 everyone, 0 nobody). `siteKey` null (no
 * installation id and no site address) is outside every rollout below 100.
 */
export function inRollout(releaseId: number, percent: number, siteKey: string | null): boolean {
  if (percent >= 100) return true;
  if (percent <= 0 || siteKey === null) return false;
  return rolloutBucket(releaseId, siteKey) < percent * 100;
}
