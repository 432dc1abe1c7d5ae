import { type ReactNode, useState } from 'react';
import { ErrorNote, Notice } from './feedback';
import { Field } from './form';

const ACCEPT = 'image/jpeg,image/png,image/webp,image/gif';

/**
 * One picture the store shows (a product's image, the store's logo): the current one, a file
 * field, Upload and Remove. `send` uploads the file (a multipart POST), `remove` deletes the
 * picture (DELETE on the same route); the server resizes, strips metadata and answers the changed
 * record (docs/storefront.md, 'Images'), which `onSaved` puts in the screen's cache.
 */
export function ImageUpload<T>(props: {
  /** Heading id, unique on the screen. */
  id: string;
  /** "image" or "logo": the heading, the field label and the buttons say it. */
  noun: string;
  send: (file: File) => Promise<T>;
  remove: () => Promise<T>;
  /** The stored picture's name under /media/ ('' for none). */
  current: string;
  /** Which of its files to show: '400' (the default) or a size of an icon or banner, 'icon-128'. */
  preview?: string;
  /** The preview's width in pixels (200 unless told). */
  previewWidth?: number;
  alt: string;
  imageClass: string;
  empty: string;
  hint: string;
  onSaved: (answer: T) => void;
  /** After the buttons (a product's "View on the store"). */
  children?: ReactNode;
}) {
  const { id, noun, current, onSaved } = props;
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState('');
  const [busy, setBusy] = useState(false);
  const [file, setFile] = useState<File | null>(null);
  const run = async (call: () => Promise<T>, words: string) => {
    setError(null);
    setNotice('');
    setBusy(true);
    try {
      onSaved(await call());
      setNotice(words);
      return true;
    } catch (e) {
      setError(e);
      return false;
    } finally {
      setBusy(false);
    }
  };
  const send = async () => {
    if (!file) return;
    if (await run(() => props.send(file), `The ${noun} is saved.`)) setFile(null);
  };
  const remove = () => run(props.remove, `The ${noun} is removed.`);
  const title = noun.charAt(0).toUpperCase() + noun.slice(1);
  return (
    <section className="card form" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      <Notice>{notice}</Notice>
      <ErrorNote error={error} title="Not saved" />
      {current ? (
        <img
          className={props.imageClass}
          src={`/media/${current}-${props.preview ?? '400'}.webp`}
          alt={props.alt}
          width={props.previewWidth ?? 200}
        />
      ) : (
        <p className="hint">{props.empty}</p>
      )}
      <Field label={`${title} file`} hint={props.hint}>
        {(p) => (
          <input
            {...p}
            type="file"
            accept={ACCEPT}
            onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)}
          />
        )}
      </Field>
      <div className="buttons">
        <button type="button" className="primary" disabled={!file || busy} onClick={send}>
          Upload {noun}
        </button>
        {current ? (
          <button type="button" className="danger" disabled={busy} onClick={remove}>
            Remove {noun}
          </button>
        ) : null}
        {props.children}
      </div>
    </section>
  );
}
