import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type DragEvent, useId, useRef, useState } from 'react';
import { useForm } from 'react-hook-form';
import { Link } from 'wouter';
import { ApiError, api, ok, upload } from '../api';
import { bytes, sha256Hex, versionFromFileName, when } from '../format';
import type { Channel, Release } from '../resources';
import { useConfirm } from '../ui/confirm';
import { Badge, ErrorNote, Loading, Notice, Page } from '../ui/feedback';
import { Field, Options, SelectField, TextField } from '../ui/form';
import { columnsFor, DataTable } from '../ui/table';
import { zipHeader } from '../zip';
import { ArtifactDeletion } from './ArtifactDeletion';

/** Where one release lives: its product and version. */
type VersionAt = { product_id: number; version_id: number };

/**
 * A product's releases (GET /v1/software/products/{id}/versions): upload, publish, withdraw,
 * current, the WordPress versions a release needs (VersionsPanel), its channel and staged rollout
 * (RolloutPanel), and deleting a release's file (ArtifactDeletion: preview, acknowledgement, job).
 */
export function Releases({ productId }: { productId: number }) {
  const client = useQueryClient();
  const confirm = useConfirm();
  const [notice, setNotice] = useState('');
  const [actionError, setActionError] = useState<unknown>(null);
  const [deleting, setDeleting] = useState<Release | null>(null);
  const [editing, setEditing] = useState<Release | null>(null);
  const [rolling, setRolling] = useState<Release | null>(null);
  const rollOpener = useRef<HTMLElement | null>(null);
  const deleteOpener = useRef<HTMLElement | null>(null);
  const listHeading = useRef<HTMLHeadingElement>(null);
  const valid = Number.isInteger(productId) && productId > 0;
  const product = useQuery({
    queryKey: ['product', productId],
    queryFn: () => ok(api.GET('/v1/products/{id}', { params: { path: { id: productId } } })),
    enabled: valid,
  });
  const versions = useQuery({
    queryKey: ['versions', productId],
    queryFn: () =>
      ok(
        api.GET('/v1/software/products/{product_id}/versions', {
          params: { path: { product_id: productId } },
        }),
      ),
    enabled: valid,
  });
  const at = (r: Release) => ({ path: { product_id: productId, version_id: r.version_id } });
  const refresh = async (message: string) => {
    setNotice(message);
    await client.invalidateQueries({ queryKey: ['versions', productId] });
  };
  const act = async (run: () => Promise<unknown>, message: string) => {
    setActionError(null);
    setNotice('');
    try {
      await run();
      await refresh(message);
    } catch (e) {
      setActionError(e);
    }
  };

  const publish = (r: Release) =>
    act(
      () =>
        ok(
          api.POST('/v1/software/products/{product_id}/versions/{version_id}/republish', {
            params: at(r),
            body: {},
          }),
        ),
      `Published ${r.version}.`,
    );
  const makeCurrent = (r: Release) =>
    act(
      () =>
        ok(
          api.PUT('/v1/software/products/{product_id}/versions/{version_id}', {
            params: at(r),
            body: { is_current: true },
          }),
        ),
      `Version ${r.version} is now the current release.`,
    );
  const withdraw = (r: Release) =>
    confirm.ask({
      title: `Withdraw version ${r.version}?`,
      body: (
        <p>
          Sites are no longer offered it, and download links already handed out for it stop working at once.
          You can publish it again later; the links do not come back.
        </p>
      ),
      confirmLabel: 'Withdraw release',
      danger: true,
      action: async () => {
        await ok(
          api.POST('/v1/software/products/{product_id}/versions/{version_id}/withdraw', {
            params: at(r),
            body: {},
          }),
        );
        await refresh(`Version ${r.version} is withdrawn.`);
      },
    });

  const startDeletion = (r: Release, opener: HTMLElement) => {
    setNotice('');
    setActionError(null);
    deleteOpener.current = opener;
    setDeleting(r);
  };
  const endDeletion = () => {
    setDeleting(null);
    // Back to the button that opened it, as a dialog would; once the file is deleted that button
    // is gone, and the list (with the notice saying so) takes the focus.
    if (deleteOpener.current?.isConnected) deleteOpener.current.focus();
    else listHeading.current?.focus();
  };

  const col = columnsFor<Release>();
  const columns = [
    col.accessor('version', { header: 'Version', cell: (c) => <strong>{c.getValue()}</strong> }),
    col.accessor('status', {
      header: 'Status',
      cell: (c) => (
        <>
          <Badge value={c.getValue()} /> {c.row.original.is_current ? <Badge value="current" /> : null}{' '}
          {c.row.original.channel !== 'stable' ? <Badge value={c.row.original.channel} /> : null}{' '}
          {c.row.original.artifact_state === 'deleted' ? <Badge value="file deleted" /> : null}
        </>
      ),
    }),
    col.accessor('channel', { header: 'Channel' }),
    col.accessor('rollout_percent', {
      header: 'Rollout',
      cell: (c) => rolloutOf(c.row.original),
    }),
    col.accessor('file_name', { header: 'File' }),
    col.accessor('file_size', { header: 'Size', cell: (c) => bytes(c.getValue()) }),
    col.accessor('file_sha256', {
      header: 'SHA-256',
      cell: (c) => (
        <code className="hash" title={c.getValue()}>
          {c.getValue().slice(0, 12)}…
        </code>
      ),
      enableSorting: false,
    }),
    col.accessor('requires', {
      header: 'WordPress',
      cell: (c) => wordpressOf(c.row.original),
      enableSorting: false,
    }),
    col.accessor('download_count', { header: 'Downloads' }),
    col.accessor('release_date', { header: 'Released', cell: (c) => when(c.getValue()), sortFn: 'text' }),
    col.display({
      id: 'actions',
      header: 'Actions',
      cell: (c) => {
        const r = c.row.original;
        return (
          <div className="row-actions">
            {/* A release whose file is gone (or going) cannot be published again (artifact_not_available). */}
            {r.status !== 'published' && r.artifact_state === 'available' ? (
              <button type="button" className="small primary" onClick={() => publish(r)}>
                Publish<span className="sr-only"> {r.version}</span>
              </button>
            ) : null}
            {r.status === 'published' && !r.is_current ? (
              <button type="button" className="small" onClick={() => makeCurrent(r)}>
                Make current<span className="sr-only"> {r.version}</span>
              </button>
            ) : null}
            {r.status === 'published' ? (
              <button type="button" className="small danger" onClick={() => withdraw(r)}>
                Withdraw<span className="sr-only"> {r.version}</span>
              </button>
            ) : null}
            <button
              type="button"
              className="small"
              onClick={() => {
                setNotice('');
                setEditing(r);
              }}
            >
              WordPress versions<span className="sr-only"> of {r.version}</span>
            </button>
            <button
              type="button"
              className="small"
              onClick={(e) => {
                setNotice('');
                rollOpener.current = e.currentTarget;
                setRolling(r);
              }}
            >
              Channel and rollout<span className="sr-only"> of {r.version}</span>
            </button>
            {!r.external_url && r.artifact_state !== 'deleted' ? (
              <button
                type="button"
                className="small danger"
                onClick={(e) => startDeletion(r, e.currentTarget)}
              >
                Delete file<span className="sr-only"> of {r.version}</span>
              </button>
            ) : null}
          </div>
        );
      },
    }),
  ];

  const back = (
    <Link href={valid ? `/products/${productId}` : '/products'}>← {product.data?.name ?? 'Product'}</Link>
  );
  if (!valid) {
    return (
      <Page title="Product not found" back={<Link href="/products">← Products</Link>}>
        <p>There is no product at this address.</p>
      </Page>
    );
  }
  return (
    <Page title={product.data ? `Releases of ${product.data.name}` : 'Releases'} back={back}>
      <ErrorNote error={product.error} />
      {product.data && (product.data.software_enabled !== 'yes' || !product.data.slug) ? (
        <p className="note" role="note">
          This product is not distributed yet: give it a slug and turn distribution on in its{' '}
          <Link href={`/products/${productId}`}>software configuration</Link>.
        </p>
      ) : null}
      <UploadPanel
        productId={productId}
        onUploaded={(r) =>
          refresh(r.status === 'published' ? `Published ${r.version}.` : `Uploaded ${r.version} as a draft.`)
        }
      />
      {deleting ? (
        <ArtifactDeletion
          key={deleting.version_id}
          productId={productId}
          release={deleting}
          onChanged={(message) => {
            if (message) setNotice(message);
            void client.invalidateQueries({ queryKey: ['versions', productId] });
          }}
          onClose={endDeletion}
        />
      ) : null}
      {editing ? (
        <VersionsPanel
          key={editing.version_id}
          at={at(editing).path}
          release={editing}
          onSaved={(r) => {
            setEditing(null);
            void refresh(`The WordPress versions of ${r.version} are saved.`);
          }}
          onClose={() => setEditing(null)}
        />
      ) : null}
      {rolling ? (
        <RolloutPanel
          key={rolling.version_id}
          at={at(rolling).path}
          release={versions.data?.releases.find((r) => r.version_id === rolling.version_id) ?? rolling}
          onSaved={(message) => void refresh(message)}
          onClose={() => {
            setRolling(null);
            rollOpener.current?.focus();
          }}
        />
      ) : null}
      <section aria-labelledby="release-list">
        <h2 id="release-list" ref={listHeading} tabIndex={-1}>
          All releases
        </h2>
        <Notice>{notice}</Notice>
        <ErrorNote error={actionError} />
        <ErrorNote error={versions.error} />
        {versions.isPending ? (
          <Loading what="releases" />
        ) : versions.data ? (
          <DataTable
            caption="Releases"
            columns={columns}
            data={versions.data.releases}
            rowKey={(r) => String(r.version_id)}
            sortable
            empty="No release yet: upload the first one above."
          />
        ) : null}
      </section>
      {confirm.dialog}
    </Page>
  );
}

/** "needs 6.1, tested 6.4, PHP 8.0": what the release needs and was tested with; a dash when unknown. */
function wordpressOf(r: Release): string {
  const parts = [
    r.requires ? `needs ${r.requires}` : '',
    r.tested ? `tested ${r.tested}` : '',
    r.requires_php ? `PHP ${r.requires_php}` : '',
  ].filter(Boolean);
  return parts.length > 0 ? parts.join(', ') : '—';
}

/** "10% · 3 sites", "paused", "everyone": a release's staged rollout and how many sites took it. */
function rolloutOf(r: Release): string {
  const sites =
    r.sites_taken === undefined ? '' : ` · ${r.sites_taken} ${r.sites_taken === 1 ? 'site' : 'sites'}`;
  const share =
    r.rollout_percent >= 100 ? 'everyone' : r.rollout_percent === 0 ? 'paused' : `${r.rollout_percent}%`;
  return `${share}${sites}`;
}

const CHANNELS: [Channel, string][] = [
  ['stable', 'Stable'],
  ['rc', 'Release candidate (rc)'],
  ['beta', 'Beta'],
  ['alpha', 'Alpha'],
];

/** What a release's panel (its channel and rollout, its WordPress versions) is given: `onSaved` gets what it saved. */
interface PanelProps<Saved> {
  at: VersionAt;
  release: Release;
  onSaved: (saved: Saved) => void;
  onClose: () => void;
}

/**
 * A release's channel (PUT …/versions/{id} {channel}) and staged rollout (PATCH …/rollout
 * {rollout_percent}: raise, pause at 0, complete at 100); docs/releases.md, 'Channels and staged
 * rollouts'. The API's refusals are shown in its words.
 */
function RolloutPanel({ at, release, onSaved, onClose }: PanelProps<string>) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [channel, setChannel] = useState<Channel>(release.channel);
  const [percent, setPercent] = useState(String(release.rollout_percent));
  const channelId = useId();
  const percentId = useId();
  const hintId = useId();
  const run = async (send: () => Promise<Release>, message: (r: Release) => string) => {
    setError(null);
    setBusy(true);
    try {
      const r = await send();
      setPercent(String(r.rollout_percent));
      setChannel(r.channel);
      onSaved(message(r));
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const rollout = (value: number) =>
    run(
      () =>
        ok(
          api.PATCH('/v1/software/products/{product_id}/versions/{version_id}/rollout', {
            params: { path: at },
            body: { rollout_percent: value },
          }),
        ),
      (r) =>
        r.rollout_percent === 0
          ? `The rollout of ${r.version} is paused.`
          : r.rollout_percent === 100
            ? `Version ${r.version} is offered to every site.`
            : `Version ${r.version} is offered to ${r.rollout_percent}% of sites.`,
    );
  return (
    <section aria-labelledby="rollout-title" className="card">
      <h2 id="rollout-title">Channel and rollout of {release.version}</h2>
      <p>
        Now: <Badge value={release.channel} /> offered to {rolloutOf(release)}.
      </p>
      <form
        className="form"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void run(
            () =>
              ok(
                api.PUT('/v1/software/products/{product_id}/versions/{version_id}', {
                  params: { path: at },
                  body: { channel },
                }),
              ),
            (r) => `Version ${r.version} is on the ${r.channel} channel.`,
          );
        }}
      >
        <div className="field">
          <label htmlFor={channelId}>Channel of {release.version}</label>
          <select id={channelId} value={channel} onChange={(e) => setChannel(e.target.value as Channel)}>
            <Options choices={CHANNELS} />
          </select>
        </div>
        <div className="buttons">
          <button type="submit" disabled={busy || channel === release.channel}>
            Save channel
          </button>
        </div>
      </form>
      <form
        className="form"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void rollout(Number(percent.trim() === '' ? Number.NaN : percent));
        }}
      >
        <div className="field">
          <label htmlFor={percentId}>Rollout of {release.version} (% of sites)</label>
          <input
            id={percentId}
            inputMode="numeric"
            autoComplete="off"
            value={percent}
            aria-describedby={hintId}
            onChange={(e) => setPercent(e.target.value)}
          />
          <p className="hint" id={hintId}>
            0 to 100. A site offered it at a lower figure stays offered it at a higher one.
          </p>
        </div>
        <ErrorNote error={error} title="Not saved" />
        <div className="buttons">
          <button type="submit" className="primary" disabled={busy}>
            Set rollout
          </button>
          <button type="button" disabled={busy || release.rollout_percent === 0} onClick={() => rollout(0)}>
            Pause
          </button>
          <button
            type="button"
            disabled={busy || release.rollout_percent === 100}
            onClick={() => rollout(100)}
          >
            Complete (100%)
          </button>
          <button type="button" onClick={onClose}>
            Close
          </button>
        </div>
      </form>
    </section>
  );
}

interface VersionsForm {
  requires: string;
  tested: string;
  requires_php: string;
}

const WP_VERSION = { value: /^[0-9]{1,4}(\.[0-9]{1,4}){0,3}$/, message: 'A version like 6.1 or 8.0.' };

/**
 * Edits what WordPress shows of a release's needs (PUT …/versions/{id}: requires, tested,
 * requires_php; docs/releases.md, 'Metadata WordPress shows'). An empty field clears the value.
 */
function VersionsPanel({ at, release, onSaved, onClose }: PanelProps<Release>) {
  const [error, setError] = useState<unknown>(null);
  const {
    register,
    handleSubmit,
    formState: { errors, isSubmitting },
  } = useForm<VersionsForm>({
    defaultValues: {
      requires: release.requires ?? '',
      tested: release.tested ?? '',
      requires_php: release.requires_php ?? '',
    },
  });
  const onSubmit = async (f: VersionsForm) => {
    setError(null);
    const value = (v: string) => (v.trim() === '' ? null : v.trim());
    try {
      onSaved(
        await ok(
          api.PUT('/v1/software/products/{product_id}/versions/{version_id}', {
            params: { path: at },
            body: {
              requires: value(f.requires),
              tested: value(f.tested),
              requires_php: value(f.requires_php),
            },
          }),
        ),
      );
    } catch (e) {
      setError(e);
    }
  };
  return (
    <section aria-labelledby="versions-title" className="card">
      <h2 id="versions-title">WordPress versions of {release.version}</h2>
      <form onSubmit={handleSubmit(onSubmit)} noValidate className="form">
        <div className="two">
          <TextField
            label="Requires WordPress"
            hint="Requires at least, e.g. 6.1"
            error={errors.requires}
            autoComplete="off"
            {...register('requires', { pattern: WP_VERSION })}
          />
          <TextField
            label="Tested up to"
            hint="e.g. 6.4"
            error={errors.tested}
            autoComplete="off"
            {...register('tested', { pattern: WP_VERSION })}
          />
        </div>
        <TextField
          label="Requires PHP"
          hint="e.g. 8.0"
          error={errors.requires_php}
          autoComplete="off"
          {...register('requires_php', { pattern: WP_VERSION })}
        />
        <ErrorNote error={error} title="Not saved" />
        <div className="buttons">
          <button type="submit" className="primary" disabled={isSubmitting}>
            Save versions
          </button>
          <button type="button" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </section>
  );
}

interface UploadForm {
  version: string;
  changelog: string;
  status: 'published' | 'draft';
  set_current: boolean;
  channel: Channel;
  rollout_percent: string;
  version_override: boolean;
}

/** A refusal's `release_version_mismatch` data: the version sent and the one the zip's header says. */
interface Mismatch {
  version: string;
  header_version: string | null;
  header: string;
}

interface Progress {
  sent: number;
  total: number;
}

/** Drag-and-drop (or choose) a .zip, then upload it with a progress bar; the SHA-256 is shown when done. */
function UploadPanel({ productId, onUploaded }: { productId: number; onUploaded: (r: Release) => void }) {
  const [file, setFile] = useState<File | null>(null);
  const [dragging, setDragging] = useState(false);
  const [progress, setProgress] = useState<Progress | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<{ release: Release; local: string | null } | null>(null);
  const abort = useRef<(() => void) | null>(null);
  /** What the owner typed in Version last: a file without a header gives the field back to it. */
  const typed = useRef('');
  /** The file whose header is being read: an older read that ends later changes nothing. */
  const reading = useRef<File | null>(null);
  const [fromZip, setFromZip] = useState<string | null>(null);
  const [mismatch, setMismatch] = useState<Mismatch | null>(null);
  const inputId = useId();
  const progressId = useId();
  const {
    register,
    handleSubmit,
    setValue,
    setError: setFieldError,
    clearErrors,
    formState: { errors },
  } = useForm<UploadForm>({
    defaultValues: {
      version: '',
      changelog: '',
      status: 'published',
      set_current: true,
      channel: 'stable',
      rollout_percent: '100',
      version_override: false,
    },
  });

  /** A new file or a new version: a refusal of the last one says nothing about it. */
  const forgetMismatch = () => {
    setMismatch(null);
    setValue('version_override', false);
    clearErrors('version');
  };

  const choose = (f: File | null | undefined) => {
    setError(null);
    setDone(null);
    if (!f) return;
    if (!f.name.toLowerCase().endsWith('.zip')) {
      setFile(null);
      setError(
        new ApiError(0, 'invalid_file_type', `${f.name} is not a .zip file. Releases are .zip archives.`),
      );
      return;
    }
    setFile(f);
    forgetMismatch();
    reading.current = f;
    // The version is the zip's (docs/admin.md, 'Releases'): its header's when it has one, else what
    // the owner typed, else a guess from the file name; never the previous file's. The guess stands
    // at once, the header's version replaces it once read.
    setFromZip(null);
    setValue('version', typed.current || versionFromFileName(f.name));
    void zipHeader(f)
      .catch(() => null)
      .then((header) => {
        if (reading.current !== f || !header?.version) return;
        setFromZip(header.version);
        setValue('version', header.version, { shouldValidate: true });
      });
  };
  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setDragging(false);
    choose(e.dataTransfer.files[0]);
  };

  const onSubmit = async (f: UploadForm) => {
    if (!file) {
      setError(new ApiError(0, 'missing_file', 'Choose the .zip file of the release first.'));
      return;
    }
    setError(null);
    setDone(null);
    setProgress({ sent: 0, total: file.size });
    // The digest of the chosen file, computed while it uploads, to compare with the server's.
    const local = sha256Hex(file).catch(() => null);
    const fields: [string, string][] = [
      ['version', f.version.trim()],
      ['status', f.status],
      // Only a stable release can be current (docs/releases.md, 'Channels and staged rollouts').
      ['set_current', f.status === 'published' && f.set_current && f.channel === 'stable' ? 'true' : 'false'],
      ['channel', f.channel],
      ['rollout_percent', f.rollout_percent.trim()],
    ];
    if (f.changelog.trim()) fields.push(['changelog', f.changelog.trim()]);
    if (mismatch && f.version_override) fields.push(['version_override', 'true']);
    const job = upload(
      '/v1/software/products/{product_id}/versions',
      { product_id: productId },
      fields,
      file,
      (sent, total) => setProgress({ sent, total }),
    );
    abort.current = job.abort;
    try {
      const release = await job.done;
      setDone({ release, local: await local });
      setFile(null);
      reading.current = null;
      typed.current = '';
      setFromZip(null);
      forgetMismatch();
      setValue('version', '');
      setValue('changelog', '');
      onUploaded(release);
    } catch (e) {
      if (e instanceof ApiError && e.code === 'release_version_mismatch') {
        const m = e.data as unknown as Mismatch;
        setMismatch(m);
        setFieldError('version', {
          type: 'server',
          message:
            m.header_version === null
              ? `The zip's ${m.header} header gives no version, so WordPress would offer it again and again.`
              : `The zip's ${m.header} header says ${m.header_version}, not ${m.version}: sites would be offered it again and again.`,
        });
      } else if (e instanceof ApiError && e.code === 'duplicate_artifact') {
        setError(
          new ApiError(
            e.status,
            e.code,
            `This file is already version ${String(e.data.version)} of this product. Choose the zip of the new version.`,
            e.data,
          ),
        );
      } else {
        setError(e);
      }
    } finally {
      abort.current = null;
      setProgress(null);
    }
  };

  const percent = progress && progress.total > 0 ? Math.round((progress.sent / progress.total) * 100) : 0;
  return (
    <section aria-labelledby="upload-title" className="card">
      <h2 id="upload-title">Upload a release</h2>
      <form onSubmit={handleSubmit(onSubmit)} noValidate className="form">
        <input
          id={inputId}
          className="file-input"
          type="file"
          accept=".zip,application/zip"
          onChange={(e) => choose(e.target.files?.[0])}
          aria-label="Release file (.zip)"
        />
        <label
          htmlFor={inputId}
          className={`drop${dragging ? ' dragging' : ''}`}
          onDragOver={(e) => {
            e.preventDefault();
            setDragging(true);
          }}
          onDragLeave={() => setDragging(false)}
          onDrop={onDrop}
        >
          <span className="drop-title">{file ? file.name : 'Drop the .zip file here'}</span>
          <span className="hint">{file ? bytes(file.size) : 'or press to choose it'}</span>
        </label>
        <div className="two">
          <div>
            <TextField
              label="Version"
              hint={fromZip !== null ? `From the zip's header: ${fromZip}` : 'e.g. 1.4.0'}
              error={errors.version}
              autoComplete="off"
              {...register('version', {
                onChange: (e: { target: { value: string } }) => {
                  typed.current = e.target.value;
                  forgetMismatch();
                },
                required: 'Enter the version.',
                pattern: {
                  value: /^[A-Za-z0-9][A-Za-z0-9.+_-]{0,63}$/,
                  message: 'Letters, digits, . + _ - ; starting with a letter or digit.',
                },
              })}
            />
            {mismatch ? (
              <label className="check">
                <input type="checkbox" {...register('version_override')} /> Publish under this version anyway
                (the override is recorded in the audit trail)
              </label>
            ) : null}
          </div>
          <Field label="After the upload">
            {(p) => (
              <select {...p} {...register('status')}>
                <option value="published">Publish at once</option>
                <option value="draft">Keep as a draft</option>
              </select>
            )}
          </Field>
        </div>
        <div className="two">
          <SelectField label="Channel" choices={CHANNELS} {...register('channel')} />
          <TextField
            label="Rollout (% of sites)"
            hint="100 offers it to everyone; lower starts a staged rollout."
            error={errors.rollout_percent}
            inputMode="numeric"
            autoComplete="off"
            {...register('rollout_percent', {
              pattern: { value: /^(100|[0-9]{1,2})$/, message: 'A whole number from 0 to 100.' },
            })}
          />
        </div>
        <Field label="Changelog (optional)" hint="Text, or JSON {narrative, points:[{type, text}]}.">
          {(p) => <textarea {...p} rows={3} {...register('changelog')} />}
        </Field>
        <label className="check">
          <input type="checkbox" {...register('set_current')} /> Make it the current release when published
          (stable releases only)
        </label>
        {progress ? (
          <div className="progress">
            <label htmlFor={progressId}>
              Uploading {file?.name}: {percent}% ({bytes(progress.sent)} of {bytes(progress.total)})
            </label>
            <progress id={progressId} max={100} value={percent} />
            <button type="button" className="small" onClick={() => abort.current?.()}>
              Cancel upload
            </button>
          </div>
        ) : null}
        <ErrorNote error={error} title="Upload refused" />
        {done ? (
          <div className="note ok" role="status">
            <p>
              Uploaded {done.release.file_name} ({bytes(done.release.file_size)}) as version{' '}
              {done.release.version}.
            </p>
            <p>
              SHA-256: <code className="hash sha">{done.release.file_sha256}</code>
            </p>
            {done.local ? (
              <p>
                {done.local === done.release.file_sha256
                  ? 'It matches the file you chose.'
                  : 'It does NOT match the file you chose: the upload was altered on the way. Withdraw it and upload again.'}
              </p>
            ) : null}
          </div>
        ) : null}
        <div className="buttons">
          <button type="submit" className="primary" disabled={progress !== null}>
            Upload
          </button>
        </div>
      </form>
    </section>
  );
}
