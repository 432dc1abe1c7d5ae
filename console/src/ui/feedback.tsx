import { type ReactNode, useEffect, useRef } from 'react';
import { ApiError } from '../api';

/** The server's answer in words: its message, and the fields it named as wrong. */
export function ErrorNote({ error, title }: { error: unknown; title?: string }) {
  if (!error) return null;
  const e =
    error instanceof ApiError
      ? error
      : new ApiError(0, 'client_error', 'Something went wrong in the console.');
  const params = Object.entries(e.params);
  return (
    <div className="note error" role="alert" data-code={e.code}>
      {title ? <strong>{title}: </strong> : null}
      {e.message}
      {params.length > 0 ? (
        <ul className="params">
          {params.map(([field, why]) => (
            <li key={field}>
              <code>{field}</code>: {String(why)}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

/** A success or information line, read out by screen readers when it appears. */
export function Notice({ children }: { children: ReactNode }) {
  if (!children) return null;
  return (
    <p className="note ok" role="status">
      {children}
    </p>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p className="loading" role="status">
      Loading {what}…
    </p>
  );
}

/** The address the console was opened at: its first screen keeps the browser's own focus. */
const openedAt = window.location.href;
let navigated = false;

/**
 * A screen: its title in the tab and as the one h1, which takes the focus when the screen changes
 * (so keyboard and screen-reader users start at the top of the new screen), and its actions.
 */
export function Page({
  title,
  actions,
  children,
  back,
}: {
  title: string;
  actions?: ReactNode;
  children: ReactNode;
  back?: ReactNode;
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · Tollgate`;
  }, [title]);
  useEffect(() => {
    if (!navigated && window.location.href === openedAt) return;
    navigated = true;
    heading.current?.focus();
  }, []);
  return (
    <>
      {back ? <p className="back">{back}</p> : null}
      <div className="page-head">
        <h1 ref={heading} tabIndex={-1}>
          {title}
        </h1>
        {actions ? <div className="actions">{actions}</div> : null}
      </div>
      {children}
    </>
  );
}

/** A status as a coloured word (the colour is never the only sign: the word is there). */
export function Badge({ value, label }: { value: string; label?: string }) {
  // The value picks the colour; the label, where given, is what people read (console/src/words.ts).
  return (
    <span className={`badge badge-${value.replace(/[^a-z]/g, '')}`} data-value={value}>
      {label ?? value}
    </span>
  );
}

/** A status badge followed, for a test-mode object (docs/payments.md, test mode), by a "test" badge. */
export function StatusBadge({ value, label, test }: { value: string; label?: string; test: boolean }) {
  return (
    <>
      <Badge value={value} {...(label !== undefined ? { label } : {})} />
      {test ? (
        <>
          {' '}
          <Badge value="test" />
        </>
      ) : null}
    </>
  );
}

/**
 * An object's page until its object is there: “not found” when the address names none (`valid`
 * false), the loading line, or the API's refusal. Null once the object is loaded.
 */
export function beforeLoaded(
  what: string,
  valid: boolean,
  object: { isPending: boolean; error: unknown; data?: unknown },
  back: ReactNode,
): ReactNode {
  const title = `${what.charAt(0).toUpperCase()}${what.slice(1)}`;
  if (!valid) {
    return (
      <Page title={`${title} not found`} back={back}>
        <p>{`There is no ${what} at this address.`}</p>
      </Page>
    );
  }
  if (object.isPending) return <Loading what={`the ${what}`} />;
  if (object.data === undefined) {
    return (
      <Page title={title} back={back}>
        <ErrorNote error={object.error} />
      </Page>
    );
  }
  return null;
}
