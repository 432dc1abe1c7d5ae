import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { api, ok } from '../api';
import { when } from '../format';
import { inputLimits } from '../limits';
import type { Settings, WebhookAttempt } from '../resources';
import { useConfirm } from '../ui/confirm';
import { Badge, ErrorNote, Loading, Notice, Page } from '../ui/feedback';
import { showFieldErrors, TextField } from '../ui/form';
import { RowButton, WholeList } from '../ui/list';
import { columnsFor } from '../ui/table';

/** A new secret: 32 random bytes in hex, as docs/webhooks.md suggests (`openssl rand -hex 32`). */
const randomSecret = () =>
  Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => b.toString(16).padStart(2, '0')).join('');

/**
 * Webhooks (docs/webhooks.md): the target and its secret (the settings `webhook_url` and
 * `webhook_secret`, PATCH /v1/settings) and the attempt log (GET /v1/webhooks/attempts) with
 * redelivery (POST /v1/webhooks/events/{event_id}/redeliver).
 */
export function Webhooks() {
  const settings = useQuery({ queryKey: ['settings'], queryFn: () => ok(api.GET('/v1/settings')) });
  return (
    <Page title="Webhooks">
      <p className="lead">
        One endpoint of yours is told when a license is revoked or renewed and when a subscription changes.
      </p>
      <ErrorNote error={settings.error} />
      {settings.isPending ? <Loading what="the webhook target" /> : null}
      {settings.data ? <Target settings={settings.data} /> : null}
      <Attempts />
    </Page>
  );
}

function Target({ settings }: { settings: Settings }) {
  const client = useQueryClient();
  const confirm = useConfirm();
  const [shown, setShown] = useState(false);
  const [notice, setNotice] = useState('');
  const [error, setError] = useState<unknown>(null);
  const {
    register,
    handleSubmit,
    setError: setFieldError,
    formState: { errors, isSubmitting },
  } = useForm<{ webhook_url: string }>({ values: { webhook_url: settings.webhook_url } });

  const save = async (changes: Partial<Settings>, message: string) => {
    setError(null);
    setNotice('');
    const saved = await ok(api.PATCH('/v1/settings', { body: changes }));
    client.setQueryData(['settings'], saved);
    setNotice(message);
  };
  const saveUrl = async (url: string) => {
    try {
      await save({ webhook_url: url }, 'The target is saved.');
    } catch (e) {
      // A refused URL is explained on its field; anything else above the form.
      if (!showFieldErrors(e, setFieldError, ['webhook_url'])) setError(e);
    }
  };
  const rotate = () =>
    confirm.ask({
      title: 'Rotate the webhook secret?',
      body: (
        <p>
          A new random secret signs every delivery from now on. The old one still signs the{' '}
          <code>webhook-signature</code> header for a day, so your receiver has time to take the new one.
        </p>
      ),
      confirmLabel: 'Rotate secret',
      action: async () => {
        await save(
          { webhook_secret: randomSecret() },
          'The secret is rotated. Give the new one to your receiver.',
        );
        setShown(true);
      },
    });

  return (
    <section aria-labelledby="webhook-target" className="card">
      <h2 id="webhook-target">Target</h2>
      <Notice>{notice}</Notice>
      <ErrorNote error={error} />
      <form className="inline-form" noValidate onSubmit={handleSubmit((f) => saveUrl(f.webhook_url.trim()))}>
        <TextField
          label="Endpoint URL"
          hint="http(s)://…; empty turns deliveries off."
          error={errors.webhook_url}
          type="url"
          inputMode="url"
          autoComplete="off"
          {...inputLimits('settings', 'webhook_url')}
          {...register('webhook_url')}
        />
        <button type="submit" className="primary" disabled={isSubmitting}>
          Save target
        </button>
      </form>
      <p>
        Secret:{' '}
        {settings.webhook_secret ? (
          <code className="secret">{shown ? settings.webhook_secret : '•'.repeat(16)}</code>
        ) : (
          <strong>none: nothing is sent until a secret is set</strong>
        )}
      </p>
      <div className="buttons">
        {settings.webhook_secret ? (
          <button type="button" aria-pressed={shown} onClick={() => setShown((s) => !s)}>
            {shown ? 'Hide secret' : 'Show secret'}
          </button>
        ) : null}
        <button type="button" onClick={rotate}>
          {settings.webhook_secret ? 'Rotate secret' : 'Create a secret'}
        </button>
      </div>
      {confirm.dialog}
    </section>
  );
}

function Attempts() {
  const client = useQueryClient();
  const [notice, setNotice] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState('');
  const attempts = useQuery({
    queryKey: ['webhook-attempts'],
    queryFn: () => ok(api.GET('/v1/webhooks/attempts')),
  });
  const redeliver = async (a: WebhookAttempt) => {
    setError(null);
    setNotice('');
    setBusy(a.event_id);
    try {
      await ok(
        api.POST('/v1/webhooks/events/{event_id}/redeliver', { params: { path: { event_id: a.event_id } } }),
      );
      setNotice(`${a.event} is being delivered again.`);
      await client.invalidateQueries({ queryKey: ['webhook-attempts'] });
    } catch (e) {
      setError(e);
    } finally {
      setBusy('');
    }
  };

  const col = columnsFor<WebhookAttempt>();
  const columns = [
    col.accessor('attempted_at', { header: 'When', cell: (c) => when(c.getValue()), sortFn: 'text' }),
    col.accessor('event', {
      header: 'Event',
      // The start of event_id tells the attempts of one event apart from another's (receivers deduplicate on it).
      cell: (c) => (
        <>
          {c.getValue()} <code className="muted">{c.row.original.event_id.slice(0, 8)}</code>
        </>
      ),
    }),
    col.accessor('attempt', { header: 'Attempt', cell: (c) => `${c.getValue()} of 5` }),
    col.accessor('delivered', {
      header: 'Result',
      cell: (c) => <Badge value={c.getValue() ? 'delivered' : 'failed'} />,
    }),
    col.accessor('response_code', {
      header: 'Answer',
      cell: (c) => c.getValue() ?? c.row.original.error ?? '—',
    }),
    col.display({
      id: 'actions',
      header: 'Actions',
      cell: (c) => (
        <RowButton
          label="Redeliver"
          row={`${c.row.original.event} ${c.row.original.event_id.slice(0, 8)} of ${when(c.row.original.attempted_at)}`}
          disabled={busy === c.row.original.event_id}
          onClick={() => redeliver(c.row.original)}
        />
      ),
    }),
  ];

  return (
    <section aria-labelledby="webhook-attempts">
      <h2 id="webhook-attempts">Delivery attempts</h2>
      <p className="hint">
        The 100 most recent, newest first. Redeliver sends the event again, up to 5 times.
      </p>
      <Notice>{notice}</Notice>
      <ErrorNote error={error} />
      <WholeList
        what="Delivery attempts"
        of={{ list: attempts }}
        columns={columns}
        rowKey={(a) => `${a.event_id}-${a.attempt}-${a.attempted_at}`}
        empty="No delivery attempt yet."
      />
    </section>
  );
}
