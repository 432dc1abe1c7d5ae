import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { type FieldPath, useFieldArray, useForm } from 'react-hook-form';
import { ApiError, api, type Body, ok, upload } from '../api';
import { inputLimits } from '../limits';
import type { Settings } from '../resources';
import { useHashFocus } from '../ui/anchor';
import { ErrorNote, Loading, Notice, Page } from '../ui/feedback';
import { Field, Options, TextField } from '../ui/form';
import { ImageUpload } from '../ui/image-upload';

type Key = keyof Settings;
type Kind =
  | 'boolean'
  | 'number'
  /** A number that may be left empty: empty is sent as null (off). */
  | 'optional-number'
  | 'text'
  | 'secret'
  | 'url'
  /** A URL that may be left empty: empty is sent as null (none). */
  | 'optional-url'
  | 'lines'
  /** Whole numbers of days, edited as text: "30, 7, 0, -7". */
  | 'days'
  | { choices: [string, string][] };
/** The form's values: a list setting is edited as text, one entry a line. */
type FormValues = Omit<Settings, 'staging_patterns' | 'renewal_url' | 'renewal_reminder_days'> & {
  staging_patterns: string;
  renewal_url: string;
  renewal_reminder_days: string;
};
const toForm = (s: Settings): FormValues => ({
  ...s,
  staging_patterns: s.staging_patterns.join('\n'),
  renewal_url: s.renewal_url ?? '',
  renewal_reminder_days: s.renewal_reminder_days.join(', '),
});
const lines = (text: string) =>
  text
    .split(/[\s,]+/)
    .map((l) => l.trim())
    .filter((l) => l !== '');

/** Every setting of GET /v1/settings, grouped, with its type and its words (docs/administration.md). */
const GROUPS: { title: string; fields: [Key, string, Kind, string?][] }[] = [
  {
    title: 'Store',
    fields: [
      ['store_name', 'Store name', 'text', 'Shown on the storefront and in emails.'],
      ['store_accent_color', 'Accent colour', 'text', 'A colour as #rrggbb, e.g. #1d4ed8.'],
      ['store_terms_url', 'Terms page URL', 'url', 'Linked from the store’s pages; empty = no link.'],
    ],
  },
  {
    title: 'Licensing',
    fields: [
      ['licensing_enabled', 'Licensing is on', 'boolean'],
      ['software_enabled', 'Software distribution is on', 'boolean'],
      [
        'activation_mode',
        'Activation mode',
        {
          choices: [
            ['simple', 'Simple (the site activates itself)'],
            ['oauth', 'Customer approval in the browser'],
          ],
        },
      ],
      ['default_activation_limit', 'Default activation limit', 'number', 'Sites per license; 0 = unlimited.'],
      ['customer_deactivation_enabled', 'Customers may deactivate their sites', 'boolean'],
      [
        'staging_patterns',
        'Staging site patterns',
        'lines',
        'One a line: a host (localhost), *.suffix or prefix.*. Matching sites take no activation slot.',
      ],
      [
        'staging_activation_limit',
        'Staging sites per license',
        'number',
        'From 0 to 1000; 0 = staging sites count as ordinary sites.',
      ],
      [
        'reinstall_takeover',
        'A reinstalled site takes over its domain’s activation instead of using a slot',
        'boolean',
      ],
      [
        'stale_activation_days',
        'Release sites not seen for (days)',
        'optional-number',
        'From 1 to 3650; empty = never. A site that has not validated or checked for updates for this long is deactivated and its slot freed.',
      ],
      ['token_expiry', 'Download link lifetime (minutes)', 'number', 'Kept between 1 and 60.'],
      ['rate_limit', 'Issuance requests a minute', 'number', 'Kept between 1 and 100.'],
      [
        'renewal_window_days',
        'Renewal window (days)',
        'number',
        'How long a renewal order may still be paid.',
      ],
      [
        'renewal_url',
        'Renewal page URL',
        'optional-url',
        'Where a site’s update check sends a customer to buy or renew a product this store does not sell; empty = none.',
      ],
      [
        'receipt_grace_days',
        'Offline receipts are good for (days)',
        'number',
        'From 1 to 365: how long a site may trust a signed receipt while it cannot reach the store.',
      ],
      [
        'renewal_grace_days',
        'Updates continue after a license ends (days)',
        'number',
        'From 0 to 365: how long update checks and downloads still work after a license’s period ends; 0 = none.',
      ],
      [
        'renewal_discount_percent',
        'Renewal discount (percent)',
        'number',
        'From 0 to 100: off the price when a customer renews a license that runs for a term.',
      ],
    ],
  },
  {
    title: 'Checkout',
    fields: [
      ['coupons_enabled', 'Coupons are accepted', 'boolean'],
      ['auto_registration', 'Checkout creates an account for a new buyer', 'boolean'],
      ['prices_include_tax', 'Prices include tax', 'boolean'],
      [
        'tax_regime',
        'Tax',
        {
          choices: [
            ['none', 'No tax'],
            ['manual', 'The tax rates entered'],
            ['digital_services', 'VAT on digital services: the buyer’s country’s rate'],
          ],
        },
      ],
      [
        'tax_seller_country',
        'Seller’s country',
        'text',
        'Two capital letters, e.g. DE: a valid VAT number of another EU country buys without VAT (reverse charge). Empty = none.',
      ],
      [
        'refund_license_action',
        'A full refund',
        {
          choices: [
            ['revoke', 'Revokes the order’s licenses'],
            ['suspend', 'Suspends the order’s licenses (they can be reinstated)'],
            ['keep', 'Keeps the order’s licenses valid'],
          ],
        },
      ],
      ['checkout_rate_limit', 'Orders a minute from one address', 'number'],
      [
        'captcha_provider',
        'Captcha',
        {
          choices: [
            ['none', 'None'],
            ['turnstile', 'Cloudflare Turnstile'],
            ['recaptcha', 'Google reCAPTCHA'],
          ],
        },
      ],
      ['captcha_site_key', 'Captcha site key', 'text'],
      ['captcha_secret', 'Captcha secret', 'secret'],
      ['captcha_verify_url', 'Captcha verification URL', 'url', 'Empty = the provider’s own.'],
    ],
  },
  {
    title: 'Stripe',
    fields: [
      [
        'stripe_publishable_key',
        'Publishable key',
        'text',
        'pk_test_… or pk_live_…, from the Stripe Dashboard: Developers → API keys.',
      ],
      [
        'stripe_secret_key',
        'Secret key',
        'secret',
        'sk_… or a restricted rk_… key. Stored sealed and shown as ********; leave it so to keep it, empty it to remove it.',
      ],
      [
        'stripe_webhook_secret',
        'Webhook signing secret',
        'secret',
        'whsec_…, of the endpoint that sends to /v1/stripe/webhook on this store. Stored sealed, like the secret key.',
      ],
      [
        'stripe_statement_descriptor',
        'Card statement suffix',
        'text',
        'At most 22 letters, digits and spaces, after the account’s prefix; empty = the account’s default.',
      ],
    ],
  },
  {
    title: 'Webhooks',
    fields: [
      ['webhook_url', 'Webhook endpoint URL', 'url', 'Empty turns deliveries off.'],
      ['webhook_secret', 'Webhook secret', 'secret'],
    ],
  },
  {
    title: 'Email',
    fields: [
      [
        'smtp_url',
        'SMTP URL',
        'text',
        'smtp://user:password@host:587 (STARTTLS) or smtps://…:465 (TLS). Empty: emails wait in Mail. The password is shown as ********; leave it so to keep it.',
      ],
      [
        'mail_from',
        'From address',
        'text',
        'e.g. Store <shop@example.com>; empty = the store name at no-reply@ this site.',
      ],
      ['mail_order_receipt', 'Send the order receipt', 'boolean'],
      [
        'mail_order_on_hold',
        'Send “waiting for payment” with the instructions (bank transfer, cheque)',
        'boolean',
      ],
      ['mail_payment_received', 'Send “payment received” (bank transfer, cheque)', 'boolean'],
      ['mail_renewal_due', 'Send “renewal due”', 'boolean'],
      ['mail_renewal_paid', 'Send “renewal paid”', 'boolean'],
      ['mail_renewal_failed', 'Send “renewal payment failed”', 'boolean'],
      ['mail_subscription_status', 'Send subscription status changes', 'boolean'],
      ['mail_license_expiring', 'Send “license expiring”', 'boolean'],
      ['license_expiring_days', 'Days before expiry to warn', 'number', 'From 1 to 365.'],
      ['mail_license_expired', 'Send “license expired”', 'boolean'],
      [
        'mail_renewal_reminder',
        'Send renewal reminders with a one-click renewal link (licenses that run for a term)',
        'boolean',
      ],
      [
        'renewal_reminder_days',
        'Renewal reminder days',
        'days',
        'Days before a license ends, comma-separated; 0 = the day it ends, negative = after it (down to -60). Up to 10, e.g. 30, 7, 0, -7. Empty = no reminders.',
      ],
      ['mail_account_created', 'Send “set your password” to accounts made at checkout', 'boolean'],
    ],
  },
  {
    title: 'Old store: License Manager for WooCommerce',
    fields: [
      [
        'lmfwc_consumer_key',
        'WooCommerce REST consumer key',
        'text',
        'The old store’s ck_… key, which plugins in the field send to its LMFWC routes. Empty closes those routes.',
      ],
      [
        'lmfwc_consumer_secret_sha256',
        'SHA-256 of its consumer secret',
        'text',
        'Lowercase hexadecimal, e.g. from printf %s cs_… | sha256sum; the secret itself is never stored.',
      ],
    ],
  },
  {
    title: 'Currencies',
    fields: [
      ['base_currency', 'Base currency', 'text', 'Three capital letters, e.g. USD.'],
      ['currency_rate_max_age', 'Exchange rates are usable for (seconds)', 'number'],
    ],
  },
];

/** The server's name of a refused field (`currencies.0.code`) is the form's name of it. */
const fieldOf = (name: string) => {
  const list = ['staging_patterns', 'renewal_reminder_days'].find(
    (l) => name.startsWith(l) || name.startsWith(`/${l}`),
  );
  return (list ?? name.replace(/^\//, '').replace(/\//g, '.')) as FieldPath<FormValues>;
};

/** Settings (GET and PATCH /v1/settings): only the changed settings are sent. */
export function SettingsPage() {
  const settings = useQuery({ queryKey: ['settings'], queryFn: () => ok(api.GET('/v1/settings')) });
  return (
    <Page title="Settings">
      <ErrorNote error={settings.error} />
      {settings.isPending ? <Loading what="the settings" /> : null}
      {settings.data ? <LogoForm logo={settings.data.store_logo} /> : null}
      {settings.data ? <SettingsForm settings={settings.data} /> : null}
    </Page>
  );
}

/** The store's logo (POST and DELETE /v1/settings/logo): an image upload, resized by the server. */
function LogoForm({ logo }: { logo: string }) {
  const client = useQueryClient();
  return (
    <ImageUpload
      id="logo-form"
      noun="logo"
      send={(file) => upload('/v1/settings/logo', {}, [], file, () => {}).done}
      remove={() => ok(api.DELETE('/v1/settings/logo'))}
      current={logo}
      alt="The store’s current logo"
      imageClass="store-logo"
      empty="No logo: the store’s pages show its name alone."
      hint="JPEG, PNG, WebP or GIF, at most 10 MB; shown 40 px high in the store’s header."
      onSaved={(r) =>
        client.setQueryData<Settings>(['settings'], (s) => (s ? { ...s, store_logo: r.store_logo } : s))
      }
    />
  );
}

function SettingsForm({ settings }: { settings: Settings }) {
  const client = useQueryClient();
  const [notice, setNotice] = useState('');
  const [error, setError] = useState<unknown>(null);
  const {
    register,
    control,
    handleSubmit,
    setError: setFieldError,
    formState: { errors, dirtyFields, isSubmitting },
  } = useForm<FormValues>({ values: toForm(settings) });
  const currencies = useFieldArray({ control, name: 'currencies' });

  const onSubmit = async (f: FormValues) => {
    setError(null);
    setNotice('');
    const changes: Partial<Record<Key, unknown>> = {};
    for (const key of Object.keys(dirtyFields) as Key[]) {
      changes[key] =
        key === 'staging_patterns'
          ? lines(f.staging_patterns)
          : key === 'renewal_reminder_days'
            ? // Not a whole number: sent as it is, for the server to name the field.
              lines(f.renewal_reminder_days).map((d) => (/^-?\d+$/.test(d) ? Number(d) : d))
            : key === 'renewal_url'
              ? f.renewal_url.trim() || null
              : f[key];
    }
    if (Object.keys(changes).length === 0) {
      setNotice('Nothing was changed.');
      return;
    }
    try {
      client.setQueryData(
        ['settings'],
        await ok(
          // The form's fields are the settings' own; the server checks each value.
          api.PATCH('/v1/settings', { body: changes as Body<'/v1/settings', 'patch'> }),
        ),
      );
      setNotice('The settings are saved.');
    } catch (e) {
      const named = e instanceof ApiError ? Object.entries(e.params) : [];
      for (const [name, why] of named) setFieldError(fieldOf(name), { message: String(why) });
      setError(e);
    }
  };

  const errorOf = (key: Key) => errors[key] as { message?: string } | undefined;
  useHashFocus(true);

  return (
    <form onSubmit={handleSubmit(onSubmit)} noValidate className="card form" aria-label="Settings">
      <Notice>{notice}</Notice>
      <ErrorNote error={error} title="Not saved" />
      {GROUPS.map((group) => (
        <fieldset key={group.title}>
          <legend>{group.title}</legend>
          {group.fields.map(([key, label, kind, hint]) =>
            kind === 'boolean' ? (
              <label key={key} className="check">
                <input type="checkbox" {...register(key)} /> {label}
              </label>
            ) : (
              <Field key={key} id={`setting-${key}`} label={label} hint={hint} error={errorOf(key)}>
                {(p) =>
                  typeof kind === 'object' ? (
                    <select {...p} {...register(key)}>
                      <Options choices={kind.choices} />
                    </select>
                  ) : kind === 'lines' ? (
                    <textarea
                      {...p}
                      rows={6}
                      spellCheck={false}
                      {...inputLimits('settings', key)}
                      {...register(key)}
                    />
                  ) : kind === 'days' ? (
                    <input {...p} type="text" inputMode="text" spellCheck={false} {...register(key)} />
                  ) : kind === 'optional-number' ? (
                    <input
                      {...p}
                      type="number"
                      inputMode="numeric"
                      min={1}
                      {...register(key, {
                        setValueAs: (v: unknown) =>
                          v === '' || v === null || v === undefined ? null : Number(v),
                      })}
                    />
                  ) : kind === 'number' ? (
                    <input
                      {...p}
                      type="number"
                      inputMode="numeric"
                      {...inputLimits('settings', key)}
                      {...register(key, { valueAsNumber: true })}
                    />
                  ) : (
                    <input
                      {...p}
                      type={kind === 'secret' ? 'password' : kind === 'text' ? 'text' : 'url'}
                      autoComplete="off"
                      {...inputLimits('settings', key)}
                      {...register(key)}
                    />
                  )
                }
              </Field>
            ),
          )}
          {group.title === 'Currencies' ? (
            <>
              {currencies.fields.map((c, i) => (
                <fieldset key={c.id} className="currency">
                  <legend>Currency {i + 1}</legend>
                  <div className="two">
                    <TextField
                      label="Code"
                      error={errors.currencies?.[i]?.code}
                      {...register(`currencies.${i}.code`)}
                    />
                    <TextField
                      label="Symbol"
                      error={errors.currencies?.[i]?.symbol}
                      {...register(`currencies.${i}.symbol`)}
                    />
                    <TextField
                      label="Decimals"
                      error={errors.currencies?.[i]?.decimals}
                      type="number"
                      inputMode="numeric"
                      {...register(`currencies.${i}.decimals`, { valueAsNumber: true })}
                    />
                    <TextField
                      label="Rate (1 base = rate)"
                      error={errors.currencies?.[i]?.rate}
                      inputMode="decimal"
                      {...register(`currencies.${i}.rate`)}
                    />
                  </div>
                  <button type="button" className="small danger" onClick={() => currencies.remove(i)}>
                    Remove currency {i + 1}
                  </button>
                </fieldset>
              ))}
              <button
                type="button"
                className="small"
                onClick={() =>
                  currencies.append({
                    code: '',
                    symbol: '',
                    decimals: 2,
                    rate: '1',
                    rate_updated_at: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
                  })
                }
              >
                Add a currency
              </button>
            </>
          ) : null}
        </fieldset>
      ))}
      <div className="buttons">
        <button type="submit" className="primary" disabled={isSubmitting}>
          Save settings
        </button>
      </div>
    </form>
  );
}
