import { useEffect, useId, useRef, useState } from 'react';
import { type Answer, ApiError, api, ok } from '../api';
import { bytes, when } from '../format';
import type { Release } from '../resources';
import { Badge, ErrorNote, Loading } from '../ui/feedback';

/** The preview's answer (docs/releases.md, 'Deleting artifacts'). */
type Preview = Answer<'/v1/software/products/{product_id}/artifact-deletions/preview', 'post'>;

/** A deletion job (`GET /v1/software/artifact-deletions/{op}`). */
type Job = Answer<'/v1/software/artifact-deletions/{op}'>;

/** The job a refusal carries: a failed run (`data.job`), or the one already deleting (`data.op_id`). */
const jobOf = (e: unknown): Job | null =>
  e instanceof ApiError && e.data.job && typeof e.data.job === 'object' ? (e.data.job as Job) : null;
const opOf = (e: unknown): string | null =>
  e instanceof ApiError && typeof e.data.op_id === 'string' ? e.data.op_id : null;

/**
 * Deleting a release's file, as the API asks (docs/releases.md, 'Deleting artifacts'): the preview
 * shows what goes (the file, every release bound to it, the download links still out) and its
 * fingerprint; the owner types the acknowledgement sentence; then the deletion runs and its job is
 * shown, with a retry when a file could not be removed. A change since the preview is refused by
 * the server (`deletion_preview_stale`) and the owner previews again.
 */
export function ArtifactDeletion({
  productId,
  release,
  onChanged,
  onClose,
}: {
  productId: number;
  release: Release;
  /** The releases changed (withdrawn, file deleted): the list is to be read again; a finished deletion says so in words. */
  onChanged: (message?: string) => void;
  onClose: () => void;
}) {
  const [preview, setPreview] = useState<Preview | null>(null);
  const [loading, setLoading] = useState(false);
  const [typed, setTyped] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [job, setJob] = useState<Job | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  const titleId = useId();
  const ackId = useId();
  const ackHint = useId();
  const targets = { release_ids: [release.version_id] };
  /** "the file of 1.0.0": an artifact in words, by the versions the preview bound to it. */
  const fileOf = (artifactId: number) => {
    const versions = preview?.targets
      .find((t) => t.artifact_id === artifactId)
      ?.releases.map((r) => r.version);
    return `the file of ${versions && versions.length > 0 ? versions.join(' and ') : release.version}`;
  };
  const finished = (j: Job) => {
    setJob(j);
    const what = j.artifact_ids.length > 0 ? j.artifact_ids.map(fileOf).join(', ') : fileOf(0);
    onChanged(j.status === 'completed' ? `Deleted ${what}.` : undefined);
  };

  const load = async () => {
    setLoading(true);
    setError(null);
    setTyped('');
    setPreview(null);
    try {
      setPreview(
        await ok(
          api.POST('/v1/software/products/{product_id}/artifact-deletions/preview', {
            params: { path: { product_id: productId } },
            body: targets,
          }),
        ),
      );
    } catch (e) {
      setError(e);
    } finally {
      setLoading(false);
    }
  };
  // biome-ignore lint/correctness/useExhaustiveDependencies: one preview per release opened
  useEffect(() => {
    heading.current?.focus();
    void load();
  }, [release.version_id]);

  const execute = async () => {
    if (!preview) return;
    setBusy(true);
    setError(null);
    try {
      finished(
        await ok(
          api.POST('/v1/software/products/{product_id}/artifact-deletions', {
            params: { path: { product_id: productId } },
            body: { ...targets, acknowledgement: typed, fingerprint: preview.fingerprint },
          }),
        ),
      );
    } catch (e) {
      setError(e);
      const failed = jobOf(e);
      if (failed) {
        setJob(failed);
        onChanged();
      }
    } finally {
      setBusy(false);
    }
  };

  /** A job: run it again (a failed one), or read it (one already under way). */
  const retry = async (op: string) => {
    setBusy(true);
    setError(null);
    try {
      finished(
        await ok(
          api.POST('/v1/software/artifact-deletions/{op}/retry', { params: { path: { op } }, body: {} }),
        ),
      );
    } catch (e) {
      setError(e);
      const failed = jobOf(e);
      if (failed) setJob(failed);
    } finally {
      setBusy(false);
    }
  };
  const show = async (op: string) => {
    setError(null);
    try {
      setJob(await ok(api.GET('/v1/software/artifact-deletions/{op}', { params: { path: { op } } })));
    } catch (e) {
      setError(e);
    }
  };

  const stale = error instanceof ApiError && error.code === 'deletion_preview_stale';
  const inProgress = !job ? opOf(error) : null;
  const matches = preview !== null && typed === preview.acknowledgement;
  return (
    <section className="card deletion" aria-labelledby={titleId}>
      <h2 id={titleId} ref={heading} tabIndex={-1}>
        Delete the file of version {release.version}
      </h2>
      {loading ? <Loading what="what would be deleted" /> : null}
      <ErrorNote error={error} title={job ? 'Deletion failed' : 'Deletion refused'} />
      {job ? (
        <JobView job={job} busy={busy} fileOf={fileOf} onRetry={() => retry(job.op_id)} />
      ) : preview ? (
        <>
          <p>
            This deletes {preview.totals.artifacts === 1 ? 'this file' : `${preview.totals.artifacts} files`}{' '}
            for good ({bytes(preview.totals.bytes)}). Every release below loses its file;{' '}
            {preview.totals.published_releases > 0
              ? `${preview.totals.published_releases} published ${preview.totals.published_releases === 1 ? 'release is' : 'releases are'} withdrawn, and `
              : ''}
            {preview.totals.outstanding_tokens} download{' '}
            {preview.totals.outstanding_tokens === 1 ? 'link' : 'links'} still handed out stop working.
          </p>
          {preview.targets.map((t) => (
            <dl className="facts aligned" key={t.artifact_id}>
              <dt>File</dt>
              <dd>
                {t.file_name ?? '—'} (artifact {t.artifact_id}, {t.storage_driver})
              </dd>
              <dt>Size</dt>
              <dd>
                {bytes(t.file_size)}
                {t.stored.exists ? '' : ' (the file is already missing from storage)'}
              </dd>
              <dt>SHA-256</dt>
              <dd>
                <code className="hash sha">{t.file_sha256 ?? '—'}</code>
              </dd>
              <dt>Releases</dt>
              <dd>
                <ul className="plain">
                  {t.releases.map((r) => (
                    <li key={r.version_id}>
                      {r.version} <Badge value={r.status} /> {r.is_current ? <Badge value="current" /> : null}
                    </li>
                  ))}
                </ul>
              </dd>
              <dt>Download links out</dt>
              <dd>{t.outstanding_tokens}</dd>
            </dl>
          ))}
          <dl className="facts aligned">
            <dt>Fingerprint</dt>
            <dd>
              <code className="hash sha" data-testid="fingerprint">
                {preview.fingerprint}
              </code>
            </dd>
          </dl>
          <div className="field">
            <label htmlFor={ackId}>
              To confirm, type <strong className="ack">{preview.acknowledgement}</strong>
            </label>
            <input
              id={ackId}
              aria-describedby={ackHint}
              autoComplete="off"
              spellCheck={false}
              value={typed}
              onChange={(e) => setTyped(e.target.value)}
            />
            <p id={ackHint} className="hint">
              The server checks the sentence and that nothing changed since this preview.
            </p>
          </div>
        </>
      ) : null}
      <div className="buttons">
        <button type="button" onClick={onClose}>
          {job ? 'Close' : 'Cancel'}
        </button>
        {stale ? (
          <button type="button" onClick={load}>
            Preview again
          </button>
        ) : null}
        {inProgress ? (
          <button type="button" onClick={() => show(inProgress)}>
            Show the deletion under way
          </button>
        ) : null}
        {!job && preview && !stale ? (
          <button type="button" className="danger" onClick={execute} disabled={!matches || busy}>
            {busy ? 'Deleting…' : 'Delete file for good'}
          </button>
        ) : null}
      </div>
    </section>
  );
}

const JOB_STATUS = { running: 'is under way', completed: 'is done', failed: 'failed' } as const;
const RESULT_STATE: Record<string, string> = {
  deleted: 'deleted',
  delete_pending: 'waiting to be deleted',
  delete_failed: 'could not be deleted',
};

function JobView({
  job,
  busy,
  fileOf,
  onRetry,
}: {
  job: Job;
  busy: boolean;
  fileOf: (artifactId: number) => string;
  onRetry: () => void;
}) {
  return (
    <div
      className={`note ${job.status === 'failed' ? 'error' : 'ok'}`}
      role="status"
      data-status={job.status}
    >
      <p>
        The deletion {JOB_STATUS[job.status] ?? job.status} <Badge value={job.status} /> after {job.attempts}{' '}
        {job.attempts === 1 ? 'attempt' : 'attempts'} ({when(job.updated_at)}).
      </p>
      <ul>
        {job.results.map((r) => (
          <li key={r.artifact_id}>
            {job.status === 'completed' && r.state === 'deleted'
              ? `Deleted ${fileOf(r.artifact_id)}.`
              : `${fileOf(r.artifact_id).replace(/^t/, 'T')}: ${RESULT_STATE[r.state] ?? r.state}.`}
            {r.error_code ? <span data-code={r.error_code}> ({r.error_code})</span> : null}
          </li>
        ))}
      </ul>
      {job.status !== 'completed' ? (
        <button type="button" className="primary" onClick={onRetry} disabled={busy}>
          {busy ? 'Retrying…' : 'Retry the deletion'}
        </button>
      ) : null}
    </div>
  );
}
