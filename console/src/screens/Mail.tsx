import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'wouter';
import { api, ok, page } from '../api';
import { when } from '../format';
import type { MailMessage } from '../resources';
import { Badge, ErrorNote, Notice, Page } from '../ui/feedback';
import { FilterSelect, ListFilters, PagedList, RowButton, useServerList } from '../ui/list';
import { columnsFor } from '../ui/table';

const STATUSES = [
  ['pending', 'Waiting'],
  ['sent', 'Sent'],
  ['failed', 'Failed'],
] as const;

/** Each message's name for people (docs/email.md, 'Messages'). */
const KINDS: Record<string, string> = {
  order_receipt: 'Order receipt',
  payment_received: 'Payment received',
  renewal_due: 'Renewal due',
  renewal_paid: 'Renewal paid',
  renewal_failed: 'Renewal failed',
  subscription_status: 'Subscription status',
  license_expiring: 'License expiring',
  license_expired: 'License expired',
  renewal_reminder: 'Renewal reminder',
  password_reset: 'Password reset',
  account_created: 'Account created',
  license_transfer: 'License transfer',
};

/** Attempts before a message is given up (RETRY_DELAYS in src/modules/mail/mail.worker.ts, plus the first). */
const MAX_ATTEMPTS = 6;

/**
 * Mail (docs/email.md): the outbox, newest first, filtered by status (GET /v1/mail/messages), each
 * with its attempts and last error, and Resend (POST /v1/mail/messages/{id}/resend).
 */
export function Mail() {
  const client = useQueryClient();
  const [notice, setNotice] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState<number | null>(null);
  const settings = useQuery({ queryKey: ['settings'], queryFn: () => ok(api.GET('/v1/settings')) });
  const l = useServerList({
    key: ['mail-messages'],
    names: ['status'],
    fetchPage: (query) => page(api.GET('/v1/mail/messages', { params: { query } })),
    defaultPerPage: 20,
  });

  const resend = async (m: MailMessage) => {
    setError(null);
    setNotice('');
    setBusy(m.id);
    try {
      await ok(api.POST('/v1/mail/messages/{id}/resend', { params: { path: { id: m.id } }, body: {} }));
      setNotice(`${KINDS[m.kind] ?? m.kind} to ${m.recipient} will be sent again.`);
      await client.invalidateQueries({ queryKey: ['mail-messages'] });
    } catch (e) {
      setError(e);
    } finally {
      setBusy(null);
    }
  };

  const col = columnsFor<MailMessage>();
  const columns = [
    col.accessor('created_at', { header: 'Written', cell: (c) => when(c.getValue()) }),
    col.accessor('kind', { header: 'Message', cell: (c) => KINDS[c.getValue()] ?? c.getValue() }),
    col.accessor('recipient', {
      header: 'To',
      cell: (c) => <span className="wrap-anywhere">{c.getValue()}</span>,
    }),
    col.accessor('subject', {
      header: 'Subject',
      cell: (c) => <span className="wrap-anywhere">{c.getValue()}</span>,
    }),
    col.accessor('status', {
      header: 'Status',
      cell: (c) => <Badge value={c.getValue()} />,
    }),
    col.accessor('attempts', { header: 'Attempts', cell: (c) => `${c.getValue()} of ${MAX_ATTEMPTS}` }),
    col.accessor('last_error', {
      header: 'Last error',
      cell: (c) => (c.getValue() ? <span className="wrap-anywhere">{c.getValue()}</span> : '—'),
    }),
    col.display({
      id: 'actions',
      header: 'Actions',
      cell: (c) => (
        <RowButton
          label="Resend"
          row={`${KINDS[c.row.original.kind] ?? c.row.original.kind} to ${c.row.original.recipient}`}
          disabled={busy === c.row.original.id}
          onClick={() => resend(c.row.original)}
        />
      ),
    }),
  ];

  return (
    <Page title="Mail">
      <p className="lead">
        Every email the store sends waits here until the mail server takes it. Failed attempts are retried for
        about 9 hours.
      </p>
      {settings.data && !settings.data.smtp_url ? (
        <p className="note" role="status">
          No mail server is connected: messages wait until you set one in{' '}
          <Link href="/settings">Settings</Link> (SMTP URL).
        </p>
      ) : null}
      <Notice>{notice}</Notice>
      <ErrorNote error={error} />
      <ListFilters label="Filter the messages" params={l}>
        <FilterSelect label="Status" value={l.status} choices={STATUSES} onChange={l.filter('status')} />
      </ListFilters>
      <PagedList
        what="Messages"
        of={l}
        columns={columns}
        empty={l.status ? 'No message has this status.' : 'No message has been written yet.'}
      />
    </Page>
  );
}
