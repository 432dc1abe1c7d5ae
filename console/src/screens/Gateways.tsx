import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useRef, useState } from 'react';
import { Link } from 'wouter';
import { ApiError, api, ok } from '../api';
import type { Gateway } from '../resources';
import { useHashFocus } from '../ui/anchor';
import { Badge, ErrorNote, Loading, Notice, Page } from '../ui/feedback';

/**
 * Payment gateways (GET and PATCH /v1/payment-gateways/{id}): the built-in gateways, switched on
 * or off, each limited to some currencies (none = every currency), with the instructions a customer
 * paying by bank transfer or cheque reads while the order waits for payment.
 */
/** The gateways whose orders wait on hold for an offline payment: only they need instructions. */
const OFFLINE = new Set(['bacs', 'cheque']);

export function Gateways() {
  const list = useQuery({ queryKey: ['gateways'], queryFn: () => ok(api.GET('/v1/payment-gateways')) });
  const settings = useQuery({ queryKey: ['settings'], queryFn: () => ok(api.GET('/v1/settings')) });
  useHashFocus(!!list.data);
  const live = settings.data?.store_mode === 'live';
  return (
    <Page title="Payment gateways">
      <ErrorNote error={list.error} />
      {list.isPending ? <Loading what="payment gateways" /> : null}
      {(list.data ?? []).map((g) => (
        <GatewayCard key={g.id} gateway={g} live={live} />
      ))}
    </Page>
  );
}

function GatewayCard({ gateway, live }: { gateway: Gateway; live: boolean }) {
  const client = useQueryClient();
  const ids = {
    title: useId(),
    currencies: useId(),
    error: useId(),
    instructions: `gateway-${gateway.id}-instructions`,
    hint: useId(),
    locked: useId(),
  };
  const instructionsRef = useRef<HTMLTextAreaElement>(null);
  const [needsInstructions, setNeedsInstructions] = useState(false);
  const testCardLocked = gateway.id === 'test_card' && live;
  const [currencies, setCurrencies] = useState(gateway.currencies.join(', '));
  const [instructions, setInstructions] = useState(gateway.instructions);
  const [notice, setNotice] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const save = async (changes: Partial<Gateway>, message: string) => {
    setBusy(true);
    setError(null);
    setNotice('');
    try {
      const saved = await ok(
        api.PATCH('/v1/payment-gateways/{id}', { params: { path: { id: gateway.id } }, body: changes }),
      );
      client.setQueryData<Gateway[]>(['gateways'], (all) => all?.map((g) => (g.id === saved.id ? saved : g)));
      setCurrencies(saved.currencies.join(', '));
      setInstructions(saved.instructions);
      setNotice(message);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const fieldError =
    error instanceof ApiError && Object.keys(error.params).some((k) => k.startsWith('currencies'));

  return (
    <section aria-labelledby={ids.title} className="card" id={`gateway-${gateway.id}`}>
      <h2 id={ids.title}>
        {gateway.title} <Badge value={gateway.enabled ? 'enabled' : 'disabled'} />
      </h2>
      <p className="muted">
        <code>{gateway.id}</code>
      </p>
      {gateway.id === 'stripe' ? (
        <p className="hint">
          Its keys and the webhook signing secret are under <Link href="/settings">Settings → Stripe</Link>.
          Until both keys are set the checkout page does not offer it.
        </p>
      ) : null}
      {gateway.id === 'test_card' ? (
        <p className="hint">
          Takes no money: the card 4242 4242 4242 4242 pays. Only a store in test mode offers it; going live
          switches it off.
        </p>
      ) : null}
      <Notice>{notice}</Notice>
      <ErrorNote error={error} />
      {needsInstructions ? (
        <p className="field-error" role="alert">
          Write the payment instructions of {gateway.title} below first: customers need them to pay.
        </p>
      ) : null}
      <div className="buttons gateway-switch">
        <button
          type="button"
          className={gateway.enabled ? undefined : 'primary'}
          disabled={busy || (testCardLocked && !gateway.enabled)}
          aria-describedby={testCardLocked && !gateway.enabled ? ids.locked : undefined}
          onClick={() => {
            // An offline gateway is enabled with its instructions (docs/payments.md): ask for them first.
            if (!gateway.enabled && OFFLINE.has(gateway.id)) {
              if (instructions.trim() === '') {
                setNeedsInstructions(true);
                instructionsRef.current?.focus();
                return;
              }
              setNeedsInstructions(false);
              void save({ enabled: true, instructions }, `${gateway.title} is enabled.`);
              return;
            }
            void save(
              { enabled: !gateway.enabled },
              `${gateway.title} is ${gateway.enabled ? 'disabled' : 'enabled'}.`,
            );
          }}
        >
          {gateway.enabled ? 'Disable' : 'Enable'}
          <span className="sr-only"> {gateway.title}</span>
        </button>
        {testCardLocked && !gateway.enabled ? (
          <span className="hint" id={ids.locked}>
            The store is live: the test card works only in test mode.
          </span>
        ) : null}
      </div>
      <form
        className="inline-form"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          const list = currencies
            .split(',')
            .map((c) => c.trim().toUpperCase())
            .filter(Boolean);
          void save({ currencies: list }, `The currencies of ${gateway.title} are saved.`);
        }}
      >
        <div className="field">
          <label htmlFor={ids.currencies}>Currencies of {gateway.title}</label>
          <input
            id={ids.currencies}
            value={currencies}
            onChange={(e) => setCurrencies(e.target.value)}
            placeholder="Every currency"
            autoComplete="off"
            aria-describedby={ids.error}
            aria-invalid={fieldError || undefined}
          />
          <p className="hint" id={ids.error}>
            Codes, commas between (EUR, USD); empty = every currency.
          </p>
        </div>
        <button type="submit" disabled={busy}>
          Save currencies
        </button>
      </form>
      {OFFLINE.has(gateway.id) ? (
        <form
          className="form gateway-instructions"
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            void save({ instructions }, `The payment instructions of ${gateway.title} are saved.`);
          }}
        >
          <div className="field">
            <label htmlFor={ids.instructions}>Payment instructions of {gateway.title}</label>
            <textarea
              ref={instructionsRef}
              id={ids.instructions}
              value={instructions}
              onChange={(e) => setInstructions(e.target.value)}
              rows={4}
              maxLength={2000}
              aria-describedby={ids.hint}
              aria-invalid={
                needsInstructions ||
                (error instanceof ApiError && 'instructions' in error.params) ||
                undefined
              }
            />
            <p className="hint" id={ids.hint}>
              Shown to the customer on the receipt, under My orders and in the order email while the order
              waits for payment: for a bank transfer the account name, IBAN and BIC; for a cheque the payee
              and the address.
            </p>
          </div>
          <button type="submit" disabled={busy}>
            Save instructions
          </button>
        </form>
      ) : null}
    </section>
  );
}
