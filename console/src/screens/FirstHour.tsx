import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useRef, useState } from 'react';
import { Link } from 'wouter';
import { ApiError, api, ok, page } from '../api';
import { ConfirmDialog, type ConfirmRequest } from '../ui/confirm';
import { ErrorNote, Notice } from '../ui/feedback';

/** The store name a new store has (DEFAULT_SETTINGS): not yet chosen by the owner. */
const DEFAULT_STORE_NAME = 'Tollgate store';

interface Step {
  key: string;
  label: string;
  done: boolean;
  /** Where to do it: one field or section, not the top of a long page. */
  href: string;
  /** Going live is refused without it (the server's 409 live_gateway_required). */
  blocks?: boolean;
}

/** What the checklist reads: the store's own data, each a query the other screens share. */
function useChecklist() {
  const settings = useQuery({ queryKey: ['settings'], queryFn: () => ok(api.GET('/v1/settings')) });
  const gateways = useQuery({ queryKey: ['gateways'], queryFn: () => ok(api.GET('/v1/payment-gateways')) });
  const products = useQuery({
    queryKey: ['first-hour', 'products'],
    queryFn: () => page(api.GET('/v1/products', { params: { query: { page: 1, per_page: 100 } } })),
  });
  const distributed = (products.data?.rows ?? []).filter((p) => p.software_enabled === 'yes');
  const released = useQuery({
    queryKey: ['first-hour', 'releases', distributed.map((p) => p.id)],
    queryFn: async () => {
      for (const p of distributed.slice(0, 10)) {
        const v = await ok(
          api.GET('/v1/software/products/{product_id}/versions', { params: { path: { product_id: p.id } } }),
        );
        if (v.releases.length > 0) return true;
      }
      return false;
    },
    enabled: products.isSuccess,
  });
  const orders = useQuery({
    queryKey: ['first-hour', 'orders'],
    queryFn: () => page(api.GET('/v1/orders', { params: { query: { page: 1, per_page: 1 } } })),
  });
  const s = settings.data;
  const loaded = s && gateways.data && products.data && released.data !== undefined && orders.data;
  if (!loaded) return { steps: null, settings: s, error: settings.error ?? gateways.error ?? products.error };
  const first = distributed[0];
  const steps: Step[] = [
    {
      key: 'store',
      label: 'Name the store and choose its currency',
      done: s.store_name !== DEFAULT_STORE_NAME,
      href: '/settings#setting-store_name',
    },
    {
      key: 'mail',
      label: 'Connect a mail server, so receipts and license keys reach buyers',
      done: s.smtp_url !== '',
      href: '/settings#setting-smtp_url',
    },
    {
      key: 'gateway',
      label: 'Enable a payment gateway that takes real payments',
      done: gateways.data.some((g) => g.enabled && g.id !== 'test_card'),
      href: '/payment-gateways#gateway-bacs',
      blocks: true,
    },
    {
      key: 'product',
      label: 'Add a product with software distribution on',
      done: !!first,
      href: first ? `/products/${first.id}` : '/products/new',
    },
    {
      key: 'release',
      label: 'Upload its first release',
      done: released.data === true,
      href: first ? `/products/${first.id}/releases` : '/products',
    },
    {
      key: 'purchase',
      label: 'Buy it once on the storefront with the test card 4242 4242 4242 4242',
      done: (orders.data.total ?? 0) > 0,
      href: '/',
    },
  ];
  return { steps, settings: s, error: null };
}

/**
 * The first-hour checklist of the dashboard (docs/admin.md, 'First hour'), shown until every step
 * is done and the store is live, and the warning of a store that cannot send mail. Going live
 * lists what is still missing: a gateway that takes real payments is required, the rest warns.
 */
export function FirstHour() {
  const client = useQueryClient();
  const { steps, settings, error } = useChecklist();
  const [confirm, setConfirm] = useState<ConfirmRequest | null>(null);
  const [blocked, setBlocked] = useState(false);
  const [notice, setNotice] = useState('');
  const deleteTestData = useRef(true);
  if (error) return <ErrorNote error={error} />;
  if (!steps || !settings) return null;
  const live = settings.store_mode === 'live';
  const missing = steps.filter((s) => !s.done);
  const mailWarning = !steps.find((s) => s.key === 'mail')!.done ? (
    <div className="card warning" role="note" aria-label="Mail">
      <p>
        <strong>No mail server is connected.</strong> Buyers get no receipt and no license key by email until
        one is. <Link href="/settings#setting-smtp_url">Connect a mail server</Link>
      </p>
    </div>
  ) : null;
  if (live && missing.length === 0) return <Notice>{notice}</Notice>;

  const goLive = () => {
    setNotice('');
    if (missing.some((s) => s.blocks)) {
      setBlocked(true);
      return;
    }
    setBlocked(false);
    deleteTestData.current = true;
    setConfirm({
      title: 'Go live?',
      confirmLabel: 'Go live',
      body: (
        <>
          <p>From now on payments are real: the test card is switched off and refused.</p>
          {missing.length > 0 ? (
            <>
              <p>Not done yet (the store can go live without them):</p>
              <ul className="missing">
                {missing.map((s) => (
                  <li key={s.key}>{s.label}</li>
                ))}
              </ul>
            </>
          ) : (
            <p>Every step of the checklist is done.</p>
          )}
          <label className="check">
            <input
              type="checkbox"
              defaultChecked
              onChange={(e) => {
                deleteTestData.current = e.target.checked;
              }}
            />{' '}
            Delete the test orders and their licenses first
          </label>
        </>
      ),
      action: async () => {
        if (deleteTestData.current) await ok(api.DELETE('/v1/test-data'));
        await ok(api.PATCH('/v1/settings', { body: { store_mode: 'live' } }));
        await client.invalidateQueries();
        setNotice('The store is live: payments are real.');
      },
    });
  };

  return (
    <>
      {mailWarning}
      <section className="card first-hour" aria-labelledby="first-hour-title">
        <h2 id="first-hour-title">First hour</h2>
        <Notice>{notice}</Notice>
        <ol className="checklist">
          {steps.map((s) => (
            <li key={s.key} className={s.done ? 'done' : 'todo'}>
              <span className="state">{s.done ? 'Done' : 'To do'}</span>{' '}
              {s.key === 'purchase' ? <a href={s.href}>{s.label}</a> : <Link href={s.href}>{s.label}</Link>}
              {s.blocks && !s.done ? <span className="muted"> (required to go live)</span> : null}
              {s.key === 'mail' && s.done ? <TestEmail /> : null}
            </li>
          ))}
          <li className={live ? 'done' : 'todo'} id="go-live">
            <span className="state">{live ? 'Done' : 'To do'}</span>{' '}
            {live ? (
              'The store is live'
            ) : (
              <button type="button" className="primary" onClick={goLive}>
                Go live
              </button>
            )}
          </li>
        </ol>
        {blocked ? (
          <p className="field-error" role="alert">
            The store cannot go live yet:{' '}
            <Link href="/payment-gateways#gateway-bacs">
              enable a payment gateway that takes real payments
            </Link>
            .
          </p>
        ) : null}
      </section>
      <ConfirmDialog request={confirm} onClose={() => setConfirm(null)} />
    </>
  );
}

/** "Send a test email" (POST /v1/mail/test): to the signed-in administrator, answered with the SMTP server's verdict. */
function TestEmail() {
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<{ ok: boolean; text: string } | null>(null);
  const send = async () => {
    setBusy(true);
    setResult(null);
    try {
      const r = await ok(api.POST('/v1/mail/test', { body: {} }));
      setResult({ ok: true, text: `A test email was sent to ${r.to}.` });
    } catch (e) {
      const smtp =
        e instanceof ApiError && typeof e.data.smtp_error === 'string' ? ` ${e.data.smtp_error}` : '';
      setResult({ ok: false, text: `${e instanceof Error ? e.message : String(e)}${smtp}` });
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      {' '}
      <button type="button" className="link" disabled={busy} onClick={send}>
        Send a test email
      </button>
      <span role="status" className={result?.ok === false ? 'field-error' : 'muted'}>
        {result ? ` ${result.text}` : ''}
      </span>
    </>
  );
}
