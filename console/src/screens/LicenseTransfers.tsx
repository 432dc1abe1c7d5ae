import { useQuery } from '@tanstack/react-query';
import { type MutableRefObject, useId, useRef } from 'react';
import { type Answer, api, ok } from '../api';
import { when } from '../format';
import type { ConfirmRequest } from '../ui/confirm';
import { Badge, ErrorNote } from '../ui/feedback';
import { columnsFor, DataTable } from '../ui/table';

type Transfer = Answer<'/v1/licenses/{id}/transfers'>[number];

interface Draft {
  email: string;
  keep: boolean;
}

/** The transfer dialog's fields; what is typed is kept in `draft` for the dialog's Send button. */
function TransferFields({ draft }: { draft: MutableRefObject<Draft> }) {
  const ids = { email: useId(), hint: useId() };
  return (
    <>
      <p>
        We email a link to this address. The license moves to its account (made if it has none) when the link
        is used, within 7 days; until then nothing changes. A pending transfer is replaced.
      </p>
      <div className="field">
        <label htmlFor={ids.email}>Receiver’s email address</label>
        <input
          id={ids.email}
          type="email"
          autoComplete="off"
          maxLength={254}
          aria-describedby={ids.hint}
          onChange={(e) => {
            draft.current.email = e.target.value;
          }}
        />
        <p className="hint" id={ids.hint}>
          The account that will own the license.
        </p>
      </div>
      <label className="check">
        <input
          type="checkbox"
          defaultChecked
          onChange={(e) => {
            draft.current.keep = e.target.checked;
          }}
        />{' '}
        Keep its sites activated (else they are deactivated when the transfer is accepted)
      </label>
    </>
  );
}

/**
 * A license's transfers (docs/selling.md, 'Transfers'): the Transfer button's dialog
 * (POST /v1/licenses/{id}/transfers), and the list of its transfers with Cancel for the pending one
 * (DELETE /v1/transfers/{id}).
 */
export function useLicenseTransfers(
  licenseId: number,
  ask: (request: ConfirmRequest) => void,
  refresh: (message: string) => Promise<void>,
) {
  const draft = useRef<Draft>({ email: '', keep: true });
  const transfers = useQuery({
    queryKey: ['license-transfers', licenseId],
    queryFn: () => ok(api.GET('/v1/licenses/{id}/transfers', { params: { path: { id: licenseId } } })),
    enabled: Number.isInteger(licenseId) && licenseId > 0,
  });

  const offer = () => {
    draft.current = { email: '', keep: true };
    ask({
      title: 'Transfer this license',
      body: <TransferFields draft={draft} />,
      confirmLabel: 'Send transfer',
      action: async () => {
        const sent = await ok(
          api.POST('/v1/licenses/{id}/transfers', {
            params: { path: { id: licenseId } },
            body: { email: draft.current.email.trim(), keep_activations: draft.current.keep },
          }),
        );
        await transfers.refetch();
        await refresh(`A transfer to ${sent.to_email} was emailed; it waits until ${when(sent.expires_at)}.`);
      },
    });
  };

  const cancel = (t: Transfer) =>
    ask({
      title: `Cancel the transfer to ${t.to_email}?`,
      body: <p>Its link stops working. The license stays with its customer.</p>,
      confirmLabel: 'Cancel transfer',
      danger: true,
      action: async () => {
        await ok(api.DELETE('/v1/transfers/{id}', { params: { path: { id: t.id } } }));
        await transfers.refetch();
        await refresh(`The transfer to ${t.to_email} is cancelled.`);
      },
    });

  const col = columnsFor<Transfer>();
  const columns = [
    col.accessor('to_email', { header: 'To' }),
    col.accessor('status', { header: 'Status', cell: (c) => <Badge value={c.getValue()} /> }),
    col.accessor('keep_activations', {
      header: 'Sites',
      cell: (c) => (c.getValue() ? 'kept' : 'deactivated on accept'),
    }),
    col.accessor('created_at', { header: 'Sent', cell: (c) => when(c.getValue()) }),
    col.accessor('expires_at', { header: 'Link expires', cell: (c) => when(c.getValue()) }),
    col.accessor('accepted_at', { header: 'Accepted', cell: (c) => when(c.getValue()) }),
    col.display({
      id: 'actions',
      header: 'Actions',
      cell: (c) =>
        c.row.original.status === 'pending' ? (
          <button type="button" className="danger small" onClick={() => cancel(c.row.original)}>
            Cancel<span className="sr-only"> the transfer to {c.row.original.to_email}</span>
          </button>
        ) : null,
    }),
  ];

  const section = (
    <section aria-labelledby="transfers">
      <h2 id="transfers">Transfers</h2>
      <ErrorNote error={transfers.error} />
      <DataTable
        caption="Transfers"
        columns={columns}
        data={transfers.data ?? []}
        rowKey={(t) => String(t.id)}
        empty="This license was never offered to another customer."
      />
    </section>
  );
  return { offer, section };
}
