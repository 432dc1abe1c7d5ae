import { type ReactNode, useEffect, useId, useRef, useState } from 'react';
import { ErrorNote } from './feedback';

export interface ConfirmRequest {
  title: string;
  body: ReactNode;
  confirmLabel: string;
  /** Runs when confirmed; a failure stays in the dialog, in words, until cancelled or retried. */
  action: () => Promise<unknown>;
  danger?: boolean;
}

/**
 * A modal confirmation on the browser's own <dialog>: focus moves into it (to Cancel, the safe
 * choice), stays inside while it is open, Escape cancels, and focus returns to the button that
 * opened it.
 */
export function ConfirmDialog({ request, onClose }: { request: ConfirmRequest | null; onClose: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (request && !dialog.open) {
      setError(null);
      setBusy(false);
      dialog.showModal();
    }
    if (!request && dialog.open) dialog.close();
  }, [request]);

  const confirm = async () => {
    if (!request) return;
    setBusy(true);
    setError(null);
    try {
      await request.action();
      onClose();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <dialog ref={ref} aria-labelledby={titleId} onClose={onClose} className="confirm">
      {request ? (
        <>
          <h2 id={titleId}>{request.title}</h2>
          <div className="confirm-body">{request.body}</div>
          <ErrorNote error={error} />
          <div className="buttons">
            {/* The first control of the dialog: showModal() puts the focus here, on the safe choice. */}
            <button type="button" onClick={onClose}>
              Cancel
            </button>
            <button
              type="button"
              className={request.danger ? 'danger' : 'primary'}
              onClick={confirm}
              disabled={busy}
            >
              {busy ? 'Working…' : request.confirmLabel}
            </button>
          </div>
        </>
      ) : null}
    </dialog>
  );
}

/** The state for one ConfirmDialog on a screen: `ask(request)` opens it. */
export function useConfirm() {
  const [request, setRequest] = useState<ConfirmRequest | null>(null);
  return {
    ask: setRequest,
    dialog: <ConfirmDialog request={request} onClose={() => setRequest(null)} />,
  };
}
