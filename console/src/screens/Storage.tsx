import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { type Answer, api, ok } from '../api';
import { bytes } from '../format';
import { useConfirm } from '../ui/confirm';
import { Badge, ErrorNote, Loading, Page } from '../ui/feedback';

/** `POST /v1/software/storage/rotate-key`: the current key, and each artifact and secret it tried. */
type Rotation = Answer<'/v1/software/storage/rotate-key', 'post'>;

const yesNo = (v: boolean) => (v ? 'yes' : 'no');
const counted = (counts: Record<string, number>) =>
  Object.entries(counts)
    .map(([k, n]) => `${k}: ${n}`)
    .join(', ') || 'none';

/**
 * The vault's storage status and key rotation: a screen of its own rather than a part of Settings,
 * because none of it is a setting (the vault and its key are configured by the server's
 * environment, docs/releases.md) and Settings saves one form with PATCH /v1/settings.
 */
export function Storage() {
  const client = useQueryClient();
  const confirm = useConfirm();
  const [rotation, setRotation] = useState<Rotation | null>(null);
  const status = useQuery({
    queryKey: ['storage-status'],
    queryFn: () => ok(api.GET('/v1/software/storage/status')),
  });

  const rotate = () =>
    confirm.ask({
      title: 'Re-seal the vault with the current key?',
      body: (
        <>
          <p>
            Every encrypted file not sealed with the current key is decrypted, sealed again with it, checked
            against its SHA-256 and then swapped in. The Stripe secrets and the signing key are sealed again
            too. A file or secret that fails stays as it was, and is listed.
          </p>
          <p>
            Start the server with the new key in <code>VAULT_KEY</code> and the old one in{' '}
            <code>VAULT_PREVIOUS_KEYS</code> first. Remove the old key only once no file uses it.
          </p>
        </>
      ),
      confirmLabel: 'Re-seal',
      action: async () => {
        setRotation(null);
        const outcome = await ok(api.POST('/v1/software/storage/rotate-key', { body: {} }));
        setRotation(outcome);
        await client.invalidateQueries({ queryKey: ['storage-status'] });
      },
    });

  const s = status.data;
  return (
    <Page title="Storage">
      <ErrorNote error={status.error} />
      {status.isPending ? <Loading what="the storage status" /> : null}
      {s ? (
        <>
          <section className="card" aria-labelledby="vault-title">
            <h2 id="vault-title">Vault</h2>
            {!s.vault.private ? (
              <p className="note error" role="note">
                The vault is inside a public folder ({s.vault.public_root}): anyone may download its files.
                Move it out (<code>VAULT_DIR</code>).
              </p>
            ) : null}
            <dl className="facts aligned">
              <dt>Path</dt>
              <dd>
                <code>{s.vault.path}</code>
              </dd>
              <dt>Exists, writable</dt>
              <dd>
                {yesNo(s.vault.exists)}, {yesNo(s.vault.writable)}
                {s.vault.mode ? ` (mode ${s.vault.mode})` : ''}
              </dd>
              <dt>Private</dt>
              <dd>
                <Badge value={s.vault.private ? 'private' : 'public'} />
              </dd>
              <dt>Free space</dt>
              <dd>
                {bytes(s.vault.free_bytes)} of {bytes(s.vault.total_bytes)}
              </dd>
              <dt>New uploads go to</dt>
              <dd>
                {s.automatic_driver} ({s.automatic_reason})
              </dd>
              <dt>Largest upload</dt>
              <dd>{bytes(s.max_upload_bytes)}</dd>
              <dt>Staging</dt>
              <dd>
                {s.staging.files} files, {bytes(s.staging.bytes)}
              </dd>
              <dt>Artifacts</dt>
              <dd>
                by driver {counted(s.counts.artifacts)}; by state {counted(s.counts.artifact_states)}
              </dd>
              <dt>Releases</dt>
              <dd>{counted(s.counts.releases)}</dd>
              <dt>Failed deletions</dt>
              <dd>{s.counts.failed_deletion_jobs}</dd>
            </dl>
          </section>
          <section className="card" aria-labelledby="key-title">
            <h2 id="key-title">Encryption key</h2>
            <dl className="facts aligned">
              <dt>Algorithm</dt>
              <dd>{s.encryption.algorithm}</dd>
              <dt>Key</dt>
              <dd>
                {s.encryption.key_id ? <code>{s.encryption.key_id}</code> : 'none yet'} (
                {s.encryption.key_source === 'env' ? 'VAULT_KEY' : (s.encryption.key_file ?? 'generated')}
                {s.encryption.key_file_mode ? `, mode ${s.encryption.key_file_mode}` : ''})
              </dd>
              <dt>Previous keys</dt>
              <dd>
                {s.encryption.previous_key_ids.length > 0
                  ? s.encryption.previous_key_ids.map((id) => <code key={id}>{id} </code>)
                  : 'none'}
              </dd>
              <dt>Files on a previous key</dt>
              <dd data-testid="on-previous-keys">{s.encryption.artifacts_on_previous_keys}</dd>
              <dt>Files on an unknown key</dt>
              <dd>{s.encryption.artifacts_with_unknown_key}</dd>
              <dt>Secrets on a previous key</dt>
              <dd data-testid="secrets-on-previous-keys">{s.encryption.secrets_on_previous_keys}</dd>
              <dt>Secrets on an unknown key</dt>
              <dd>{s.encryption.secrets_with_unknown_key}</dd>
            </dl>
            <p className="hint">
              Key ids are hash prefixes that tell keys apart; the key itself is never shown. Secrets are the
              Stripe keys and the signing key, which the vault key seals in the database. Re-sealing is
              recorded in the audit trail, file by file and secret by secret.
            </p>
            <div className="buttons">
              <button type="button" className="primary" onClick={rotate}>
                Re-seal with the current key
              </button>
            </div>
            {rotation ? <RotationOutcome rotation={rotation} /> : null}
          </section>
        </>
      ) : null}
      {confirm.dialog}
    </Page>
  );
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

function RotationOutcome({ rotation }: { rotation: Rotation }) {
  const failed = rotation.results.filter((r) => !r.ok).length + rotation.secrets.filter((r) => !r.ok).length;
  const done = rotation.resealed + rotation.secrets_resealed;
  return (
    <div className={`note ${failed > 0 ? 'error' : 'ok'}`} role="status">
      <p>
        {done === 0 && failed === 0
          ? 'Every file and secret was already sealed with the current key: nothing to do.'
          : `${plural(rotation.resealed, 'file', 'files')} and ${plural(rotation.secrets_resealed, 'secret', 'secrets')} re-sealed with key ${rotation.key_id}.`}
        {failed > 0 ? ` ${failed} could not be re-sealed and stay as they were:` : ''}
      </p>
      {rotation.results.length + rotation.secrets.length > 0 ? (
        <ul>
          {rotation.results.map((r) => (
            <li key={r.artifact_id}>
              Artifact {r.artifact_id} (from key {r.from_key_id ?? 'none'}):{' '}
              {r.ok ? 're-sealed' : <span data-code={r.error}>failed, {r.error}</span>}
            </li>
          ))}
          {rotation.secrets.map((r) => (
            <li key={r.secret}>
              <code>{r.secret}</code> (from key {r.from_key_id ?? 'none'}):{' '}
              {r.ok ? 're-sealed' : <span data-code={r.error}>failed, {r.error}</span>}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
