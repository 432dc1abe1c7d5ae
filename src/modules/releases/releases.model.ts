import type { Selectable } from 'kysely';
import { mysqlTime } from '../../clock.js';
import { ApiError } from '../../http/errors.js';
import type {
  ArtifactState,
  ReleaseChannel,
  ReleaseMetadata,
  ReleaseStatus,
  ReleasesTables,
} from './releases.tables.js';
import { versionCompare } from './version-compare.js';
import { type PackageHeader, plain } from './wp-headers.js';

export type ReleaseRow = Selectable<ReleasesTables['releases']>;
export type ArtifactRow = Selectable<ReleasesTables['artifacts']>;
export type LegacyDownloadRow = Selectable<ReleasesTables['legacy_downloads']>;
export type DeletionRow = Selectable<ReleasesTables['artifact_deletions']>;

export interface ChangelogPoint {
  type: string;
  text: string;
}
export type Changelog = string | { narrative: string; points: ChangelogPoint[] };

/**
 * A release (the fields of docs/releases.md, 'Upload (multipart)') as administrators and the
 * distribution module see it; its WordPress metadata (ReleaseMetadata) null when unknown.
 */
export interface Release extends ReleaseMetadata {
  version_id: number;
  product_id: number;
  version: string;
  status: ReleaseStatus;
  is_current: boolean;
  /** `YYYY-MM-DD HH:MM:SS` UTC; null for a draft never published. */
  published_at: string | null;
  release_date: string;
  withdrawn_at: string | null;
  changelog: Changelog | null;
  download_count: number;
  artifact_id: number;
  artifact_download_id: string;
  artifact_state: ArtifactState;
  file_name: string;
  file_size: number | null;
  file_sha256: string;
  storage_driver: string;
  /** True for an external link: no token, a gated manual download instead. */
  manual_download_only: boolean;
  /** The provider URL of an external release (administrators only; null otherwise). */
  external_url: string | null;
  /**
   * The artifact's base64 Ed25519 signature over the SHA-384 digest of its bytes, the key that made
   * it and when (`YYYY-MM-DD HH:MM:SS` UTC): null for an external link, and for an artifact not
   * signed yet or whose bytes failed the check of the signing data step (docs/releases.md).
   */
  signature: string | null;
  signing_key_id: string | null;
  signed_at: string | null;
  /** The release's channel and the percentage of sites it is offered to (docs/distribution.md). */
  channel: ReleaseChannel;
  rollout_percent: number;
}

/**
 * The artifact columns that joined reads take alongside a release (the published-releases query,
 * aliased `a_…`; the download's, which adds `stored_etag`).
 * Not `stored_etag`: only reading the bytes needs it, and nothing reads them from these rows.
 */
export const ARTIFACT_COLUMNS = [
  'id',
  'product_id',
  'download_id',
  'driver',
  'storage_key',
  'key_id',
  'file_name',
  'file_size',
  'stored_size',
  'file_sha256',
  'state',
  'source_download_id',
  'deletion_op',
  'created_at',
  'updated_at',
  'deleted_at',
  'file_md5',
  'signature',
  'signing_key_id',
  'signed_at',
] as const satisfies readonly (keyof ArtifactRow)[];

/** The release fields WordPress shows, read from the zip and edited by the administrator. */
export const METADATA_FIELDS = [
  'requires',
  'tested',
  'requires_php',
  'name',
  'description',
  'homepage',
  'author',
] as const;
export type MetadataField = (typeof METADATA_FIELDS)[number];

export const SHA256_HEX = /^[0-9a-f]{64}$/;
/** Versions are compared with PHP semantics; this only keeps them safe in file names and headers. */
export const VERSION_PATTERN = '^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$';
const VERSION = new RegExp(VERSION_PATTERN);
/** A plain archive file name: no directories, no leading dot, no control characters. */
const FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,250}$/;

export const toTime = (iso: string | null): string | null => (iso ? mysqlTime(new Date(iso)) : null);

export function toRelease(row: ReleaseRow, artifact: ArtifactRow): Release {
  const external = artifact.driver === 'external';
  return {
    version_id: row.id,
    product_id: row.product_id,
    version: row.version,
    status: row.status,
    is_current: row.is_current === 1,
    published_at: toTime(row.published_at),
    release_date: toTime(row.release_date)!,
    withdrawn_at: toTime(row.withdrawn_at),
    changelog: row.changelog === null ? null : (JSON.parse(row.changelog) as Changelog),
    download_count: Number(row.download_count),
    artifact_id: artifact.id,
    artifact_download_id: artifact.download_id,
    artifact_state: artifact.state,
    file_name: row.file_name,
    file_size: row.file_size === null ? null : Number(row.file_size),
    file_sha256: row.file_sha256,
    storage_driver: artifact.driver,
    manual_download_only: external,
    external_url: external ? artifact.storage_key : null,
    signature: artifact.signature ?? null,
    signing_key_id: artifact.signing_key_id ?? null,
    signed_at: toTime(artifact.signed_at ?? null),
    requires: row.requires ?? null,
    tested: row.tested ?? null,
    requires_php: row.requires_php ?? null,
    name: row.name ?? null,
    description: row.description ?? null,
    homepage: row.homepage ?? null,
    author: row.author ?? null,
    channel: row.channel ?? 'stable',
    rollout_percent: row.rollout_percent === undefined ? 100 : Number(row.rollout_percent),
  };
}

export function checkVersion(version: string): void {
  if (!VERSION.test(version)) throw new ApiError('invalid_version', { data: { params: { version } } });
}

/** Renders the product's filename template for a version. */
export function renderFileName(template: string, slug: string, version: string): string {
  return template.replaceAll('{slug}', slug).replaceAll('{version}', version);
}

/** A plain `.zip` file name, or 400 `invalid_filename` (traversal, separators, control characters). */
export function checkFileName(name: string): void {
  if (!FILE_NAME.test(name) || name.includes('..') || !name.toLowerCase().endsWith('.zip')) {
    throw new ApiError('invalid_filename', { data: { params: { filename: 'not a plain .zip file name' } } });
  }
}

export interface TemplateCheck {
  valid: boolean;
  expected_file_name: string;
  template: string;
  reasons: string[];
}

/**
 * Compares a file name and version with the effective template: the name must be what the
 * template renders for that version (ASCII case aside), and a safe plain `.zip` name.
 */
export function compareWithTemplate(
  template: string,
  slug: string,
  version: string,
  fileName: string,
): TemplateCheck {
  const expected = renderFileName(template, slug, version);
  const reasons: string[] = [];
  if (!FILE_NAME.test(fileName) || fileName.includes('..')) reasons.push('unsafe_file_name');
  if (!fileName.toLowerCase().endsWith('.zip')) reasons.push('not_zip');
  if (fileName.toLowerCase() !== expected.toLowerCase()) reasons.push('template_mismatch');
  return { valid: reasons.length === 0, expected_file_name: expected, template, reasons };
}

/** `version_override`: a boolean, or the text `true`/`1` or `false`/`0` of a form. */
export function parseOverride(value: unknown): boolean {
  if (value === undefined || value === false || value === 'false' || value === '0') return false;
  if (value === true || value === 'true' || value === '1') return true;
  throw new ApiError('rest_invalid_param', { data: { params: { version_override: 'true or false' } } });
}

/**
 * A release is what its zip says (docs/releases.md, 'The version is the zip's'): the version given
 * must equal the `Version:` of the zip's plugin or theme header as PHP's `version_compare(a, b,
 * '=')` decides, the comparison WordPress makes before it offers an update, so a site that
 * installed it is never offered the same bytes again. A header without a `Version:` is read by
 * WordPress as the empty version, which equals none. A zip without such a header is not checked.
 * `override` accepts a mismatch: the answer is the header version it accepted (for the audit
 * trail), else undefined.
 */
export function checkHeaderVersion(
  version: string,
  header: PackageHeader | null,
  override: boolean,
): { header_version: string | null } | undefined {
  if (!header || (header.version !== null && versionCompare(version, header.version) === 0)) return undefined;
  // Shown, never trusted: one line of bounded text.
  const shown = plain(header.version, 80);
  if (override) return { header_version: shown };
  throw new ApiError('release_version_mismatch', {
    message:
      shown === null
        ? `The version given is ${version}, but the zip's ${header.kind} header (${plain(header.file, 200)}) gives no Version; send version_override to publish it anyway.`
        : `The version given is ${version}, but the zip's ${header.kind} header says ${shown}; send version_override to publish it anyway.`,
    data: {
      params: { version: 'differs from the zip' },
      version,
      header_version: shown,
      header: header.kind,
      header_file: plain(header.file, 200),
    },
  });
}

/** Multipart and JSON give set_current as a boolean or the strings "true"/"false". */
export function parseBool(value: unknown, field: string): boolean {
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw new ApiError('rest_invalid_param', { data: { params: { [field]: 'true or false' } } });
}

const POINT_TYPE = /^[a-z][a-z0-9_-]{0,39}$/;

/** Control characters (header injection, log forging); line breaks and tabs only where allowed. */
export function hasControlCharacters(text: string, allowLineBreaks = false): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x7f) return true;
    if (c < 0x20 && !(allowLineBreaks && (c === 0x09 || c === 0x0a || c === 0x0d))) return true;
  }
  return false;
}
const MAX_NARRATIVE = 65535;
const MAX_POINTS = 200;
const MAX_POINT_TEXT = 2000;

/**
 * A changelog is a narrative string or `{narrative, points:[{type, text}]}` (docs/releases.md,
 * 'Upload (multipart)'). Multipart carries it as text: text starting with `{` must be that object
 * as JSON.
 */
export function parseChangelog(input: unknown, fromText: boolean): Changelog {
  const fail = (why: string): never => {
    throw new ApiError('invalid_changelog', { data: { params: { changelog: why } } });
  };
  let value = input;
  if (fromText && typeof input === 'string' && input.trimStart().startsWith('{')) {
    try {
      value = JSON.parse(input);
    } catch {
      fail('not valid JSON');
    }
  }
  if (typeof value === 'string') {
    if (value.length > MAX_NARRATIVE || hasControlCharacters(value, true))
      fail('too long or has control characters');
    return value;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail('string or object');
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj);
  if (keys.some((k) => k !== 'narrative' && k !== 'points')) fail('only narrative and points');
  const narrative = obj.narrative ?? '';
  if (
    typeof narrative !== 'string' ||
    narrative.length > MAX_NARRATIVE ||
    hasControlCharacters(narrative, true)
  ) {
    fail('narrative must be text');
  }
  const points = obj.points ?? [];
  if (!Array.isArray(points) || points.length > MAX_POINTS) return fail(`points: at most ${MAX_POINTS}`);
  const clean: ChangelogPoint[] = points.map((p: unknown) => {
    const point = p as Record<string, unknown>;
    if (typeof p !== 'object' || p === null || Object.keys(point).some((k) => k !== 'type' && k !== 'text')) {
      return fail('each point is {type, text}');
    }
    const { type, text } = point;
    if (typeof type !== 'string' || !POINT_TYPE.test(type)) return fail('point type: a-z, 0-9, _ and -');
    if (
      typeof text !== 'string' ||
      text.length === 0 ||
      text.length > MAX_POINT_TEXT ||
      hasControlCharacters(text)
    ) {
      return fail('point text: one line of text');
    }
    return { type, text };
  });
  return { narrative: narrative as string, points: clean };
}
