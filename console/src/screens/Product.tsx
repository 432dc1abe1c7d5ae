import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import {
  type FieldErrors,
  type UseFormRegister,
  type UseFormWatch,
  useFieldArray,
  useForm,
} from 'react-hook-form';
import { Link, useSearch } from 'wouter';
import { api, type Body, ok, upload } from '../api';
import { inputLimits } from '../limits';
import type { Product, SoftwareConfig, Variation } from '../resources';
import { ErrorNote, Loading, Notice, Page } from '../ui/feedback';
import { type Choices, Field, SelectField, TextField } from '../ui/form';
import { ImageUpload } from '../ui/image-upload';
import {
  NumberField,
  PRICE,
  SHORT_DESCRIPTION,
  ShortDescriptionField,
  SITES,
  SitesField,
  TRIAL_DAYS,
  TRIAL_SITES,
  TrialFields,
} from '../ui/product-fields';
import { History } from './Audit';
import { InstalledBaseSection } from './InstalledBase';
import { NewProductForm } from './NewProduct';

interface VariationRow {
  id: string;
  name: string;
  price: string;
  activation_limit: string;
}

interface ProductForm {
  name: string;
  short_description: string;
  description: string;
  status: string;
  type: string;
  price: string;
  virtual: boolean;
  activation_limit: string;
  activation_mode: string;
  period: string;
  interval: string;
  variations: VariationRow[];
  policy: boolean;
  usage_mode: string;
  usage_days: string;
  updates_mode: string;
  updates_days: string;
  support_mode: string;
  support_days: string;
  historical_downloads: boolean;
}

const isVariable = (type: string) => type === 'variable' || type === 'variable-subscription';
const isSubscription = (type: string) => type === 'subscription' || type === 'variable-subscription';
const DAYS = { value: /^\d+$/, message: 'A whole number of days.' };

/**
 * One part of a product's license policy (usage, updates, support): its mode, and its number of
 * days when the mode is “for a number of days” (docs/licensing.md).
 */
function PolicyPart({
  part,
  label,
  daysLabel,
  modes,
  showErrorOnMode = false,
  register,
  watch,
  errors,
}: {
  part: 'usage' | 'updates' | 'support';
  label: string;
  daysLabel: string;
  modes: Choices;
  showErrorOnMode?: boolean;
  register: UseFormRegister<ProductForm>;
  watch: UseFormWatch<ProductForm>;
  errors: FieldErrors<ProductForm>;
}) {
  const mode = `${part}_mode` as const;
  const days = `${part}_days` as const;
  return (
    <>
      <SelectField
        label={label}
        error={showErrorOnMode ? errors[days] : undefined}
        choices={modes}
        {...register(mode)}
      />
      {watch(mode) === 'days' ? (
        <Field label={daysLabel} error={errors[days]}>
          {(p) => (
            <input {...p} type="number" min={1} {...register(days, { required: 'Days?', pattern: DAYS })} />
          )}
        </Field>
      ) : null}
    </>
  );
}

function formOf(p: Product): ProductForm {
  const policy = p?.entitlement_policy;
  return {
    name: p?.name ?? '',
    short_description: p?.short_description ?? '',
    description: p?.description ?? '',
    status: p?.status ?? 'publish',
    type: p?.type ?? 'simple',
    price: p?.price ?? '',
    virtual: p?.virtual ?? true,
    activation_limit:
      p?.activation_limit === null || p?.activation_limit === undefined ? '' : String(p.activation_limit),
    activation_mode: p?.activation_mode ?? '',
    period: p?.subscription?.period ?? 'year',
    interval: String(p?.subscription?.interval ?? 1),
    variations: (p?.variations ?? []).map((v) => ({
      id: String(v.id),
      name: v.name,
      price: v.price,
      activation_limit: v.activation_limit === null ? '' : String(v.activation_limit),
    })),
    policy: Boolean(policy),
    usage_mode: policy?.usage.mode ?? 'lifetime',
    usage_days: String(policy?.usage.days ?? ''),
    updates_mode: policy?.updates.mode ?? 'license',
    updates_days: String(policy?.updates.days ?? ''),
    support_mode: policy?.support.mode ?? 'unspecified',
    support_days: String(policy?.support.days ?? ''),
    historical_downloads: policy?.historical_downloads ?? false,
  };
}

const part = (mode: string, days: string) => (mode === 'days' ? { mode, days: Number(days) } : { mode });

/** The request body of the form: PATCH /v1/products/{id} (variations complete). */
function bodyOf(f: ProductForm, before: Product): Record<string, unknown> {
  const body: Record<string, unknown> = {
    name: f.name.trim(),
    short_description: f.short_description.trim(),
    description: f.description,
    status: f.status,
    type: f.type,
    virtual: f.virtual,
    activation_limit: f.activation_limit === '' ? null : Number(f.activation_limit),
    activation_mode: f.activation_mode || null,
    entitlement_policy: f.policy
      ? {
          usage: part(f.usage_mode, f.usage_days),
          updates: part(f.updates_mode, f.updates_days),
          support: part(f.support_mode, f.support_days),
          historical_downloads: f.historical_downloads,
        }
      : null,
  };
  if (f.price !== '' || !isVariable(f.type)) body.price = f.price;
  if (isSubscription(f.type)) body.subscription = { period: f.period, interval: Number(f.interval) };
  else if (before?.subscription) body.subscription = null;
  if (isVariable(f.type)) {
    const old = new Map<string, Variation & { attributes?: unknown; stock_quantity?: unknown }>(
      (before?.variations ?? []).map((v) => [String(v.id), v]),
    );
    body.variations = f.variations.map((v) => {
      const kept = old.get(v.id) as {
        attributes?: unknown;
        stock_quantity?: unknown;
        entitlement_policy?: unknown;
      };
      return {
        ...(kept ? { id: Number(v.id) } : {}),
        // A replaced variation takes defaults for what is left out: keep what this form does not edit.
        ...(kept?.attributes ? { attributes: kept.attributes } : {}),
        ...(kept?.stock_quantity !== undefined ? { stock_quantity: kept.stock_quantity } : {}),
        ...(kept?.entitlement_policy ? { entitlement_policy: kept.entitlement_policy } : {}),
        name: v.name.trim(),
        price: v.price,
        activation_limit: v.activation_limit === '' ? null : Number(v.activation_limit),
      };
    });
  } else if (before && before.variations.length > 0) body.variations = [];
  return body;
}

/** A product: create (id null, in one form: NewProduct.tsx) or edit, with its software configuration. */
export function ProductPage({ id }: { id: number | null }) {
  const product = useQuery({
    queryKey: ['product', id],
    queryFn: () => ok(api.GET('/v1/products/{id}', { params: { path: { id: Number(id) } } })),
    enabled: id !== null && Number.isInteger(id) && id > 0,
  });
  const back = <Link href="/products">← Products</Link>;
  if (id !== null && (!Number.isInteger(id) || id <= 0)) {
    return (
      <Page title="Product not found" back={back}>
        <p>There is no product at this address.</p>
      </Page>
    );
  }
  if (id !== null && product.isPending) return <Loading what="the product" />;
  if (id !== null && !product.data) {
    return (
      <Page title="Product" back={back}>
        <ErrorNote error={product.error} />
      </Page>
    );
  }
  const p = product.data ?? null;
  return (
    <Page
      title={p ? p.name : 'New product'}
      back={back}
      actions={
        p ? (
          <Link href={`/products/${p.id}/releases`} className="button">
            Releases
          </Link>
        ) : null
      }
    >
      {p ? <ProductForm product={p} key={p.id} /> : <NewProductForm />}
      {p ? <ImageForm product={p} /> : null}
      {p ? <SoftwareForm product={p} /> : null}
      {p ? <WordPressImages product={p} /> : null}
      {p ? <InstalledBaseSection productId={p.id} /> : null}
      {p ? <History type="product" id={p.id} /> : null}
    </Page>
  );
}

function ProductForm({ product }: { product: Product }) {
  const client = useQueryClient();
  const search = useSearch();
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState(
    new URLSearchParams(search).get('created') ? 'The product is created.' : '',
  );
  const {
    register,
    handleSubmit,
    watch,
    control,
    reset,
    formState: { errors, isSubmitting },
  } = useForm<ProductForm>({ defaultValues: formOf(product) });
  const variations = useFieldArray({ control, name: 'variations' });
  const type = watch('type');
  const policy = watch('policy');

  const onSubmit = async (f: ProductForm) => {
    setError(null);
    setNotice('');
    try {
      const saved = await ok(
        api.PATCH('/v1/products/{id}', { params: { path: { id: product.id } }, body: bodyOf(f, product) }),
      );
      client.setQueryData(['product', product.id], saved);
      reset(formOf(saved));
      setNotice('The product is saved.');
      await client.invalidateQueries({ queryKey: ['products'] });
      await client.invalidateQueries({ queryKey: ['audit-events'] });
    } catch (e) {
      setError(e);
    }
  };

  return (
    <form onSubmit={handleSubmit(onSubmit)} noValidate className="card form" aria-labelledby="product-form">
      <h2 id="product-form">Product</h2>
      <Notice>{notice}</Notice>
      <ErrorNote error={error} />
      <TextField
        label="Name"
        error={errors.name}
        {...inputLimits('product', 'name')}
        {...register('name', { required: 'Enter the product’s name.' })}
      />
      <ShortDescriptionField
        field={register('short_description', SHORT_DESCRIPTION)}
        error={errors.short_description}
      />
      <Field
        label="Description"
        hint="The product page’s text; a blank line starts a new paragraph."
        error={errors.description}
      >
        {(p) => <textarea {...p} rows={5} maxLength={20000} {...register('description')} />}
      </Field>
      <div className="two">
        <Field label="Type">
          {(p) => (
            <select {...p} {...register('type')}>
              <option value="simple">Simple</option>
              <option value="variable">Variable (with variations)</option>
              <option value="subscription">Subscription</option>
              <option value="variable-subscription">Variable subscription</option>
            </select>
          )}
        </Field>
        <Field label="Status">
          {(p) => (
            <select {...p} {...register('status')}>
              <option value="publish">Published</option>
              <option value="draft">Draft</option>
            </select>
          )}
        </Field>
      </div>
      <div className="two">
        <TextField
          label={isVariable(type) ? 'Price (optional)' : 'Price'}
          hint="In the store's base currency, e.g. 49.00."
          error={errors.price}
          inputMode="decimal"
          {...register('price', {
            required: isVariable(type) ? false : 'Enter a price.',
            pattern: PRICE,
          })}
        />
        <SitesField
          label="Activation limit"
          hint="Sites per license; 0 = unlimited; empty = the store's default."
          field={register('activation_limit', SITES)}
          error={errors.activation_limit}
        />
      </div>
      <div className="two">
        <Field label="Activation mode">
          {(p) => (
            <select {...p} {...register('activation_mode')}>
              <option value="">The store's setting</option>
              <option value="simple">Simple (the site activates itself)</option>
              <option value="oauth">Customer approval in the browser</option>
            </select>
          )}
        </Field>
        <label className="check">
          <input type="checkbox" {...register('virtual')} /> Virtual (nothing to ship)
        </label>
      </div>
      {isSubscription(type) ? (
        <fieldset>
          <legend>Subscription</legend>
          <div className="two">
            <NumberField
              label="Renews every"
              field={register('interval', {
                required: 'How many periods?',
                pattern: { value: /^[1-9]\d*$/, message: 'A whole number from 1.' },
              })}
              error={errors.interval}
              min={1}
              max={1000}
            />
            <Field label="Period">
              {(p) => (
                <select {...p} {...register('period')}>
                  <option value="day">days</option>
                  <option value="week">weeks</option>
                  <option value="month">months</option>
                  <option value="year">years</option>
                </select>
              )}
            </Field>
          </div>
        </fieldset>
      ) : null}
      {isVariable(type) ? (
        <fieldset>
          <legend>Variations</legend>
          {variations.fields.length === 0 ? (
            <p className="hint">A variable product needs at least one variation.</p>
          ) : null}
          {variations.fields.map((field, i) => (
            <div className="variation" key={field.id}>
              <Field label={`Variation ${i + 1} name`} error={errors.variations?.[i]?.name}>
                {(p) => (
                  <input {...p} {...register(`variations.${i}.name`, { required: 'Name the variation.' })} />
                )}
              </Field>
              <TextField
                label="Price"
                error={errors.variations?.[i]?.price}
                inputMode="decimal"
                {...register(`variations.${i}.price`, { required: 'Enter a price.', pattern: PRICE })}
              />
              <TextField
                label="Sites"
                hint="Empty = the product's."
                error={errors.variations?.[i]?.activation_limit}
                type="number"
                min={0}
                {...register(`variations.${i}.activation_limit`, {
                  pattern: { value: /^\d*$/, message: 'A whole number.' },
                })}
              />
              <button type="button" className="small" onClick={() => variations.remove(i)}>
                Remove<span className="sr-only"> variation {i + 1}</span>
              </button>
            </div>
          ))}
          <button
            type="button"
            onClick={() => variations.append({ id: '', name: '', price: '', activation_limit: '' })}
          >
            Add a variation
          </button>
        </fieldset>
      ) : null}
      <fieldset>
        <legend>Entitlement policy</legend>
        <label className="check">
          <input type="checkbox" {...register('policy')} /> Licenses follow a policy (otherwise: their usage
          expiry only)
        </label>
        {policy ? (
          <div className="three">
            <PolicyPart
              part="usage"
              label="Usage"
              daysLabel="Usage days"
              modes={[
                ['lifetime', 'for life'],
                ['days', 'for a number of days'],
                ['subscription', 'while the subscription runs'],
              ]}
              showErrorOnMode
              {...{ register, watch, errors }}
            />
            <PolicyPart
              part="updates"
              label="Updates"
              daysLabel="Update days"
              modes={[
                ['license', 'while the license works'],
                ['days', 'for a number of days'],
              ]}
              {...{ register, watch, errors }}
            />
            <PolicyPart
              part="support"
              label="Support"
              daysLabel="Support days"
              modes={[
                ['unspecified', 'not stated'],
                ['days', 'for a number of days'],
              ]}
              {...{ register, watch, errors }}
            />
            <label className="check">
              <input type="checkbox" {...register('historical_downloads')} /> Older releases stay downloadable
            </label>
          </div>
        ) : null}
      </fieldset>
      <div className="buttons">
        <button type="submit" className="primary" disabled={isSubmitting}>
          {isSubmitting ? 'Saving…' : 'Save product'}
        </button>
      </div>
    </form>
  );
}

interface SoftwareFormValues {
  slug: string;
  filename_template: string;
  storage_driver: string;
  licensing_enabled: string;
  software_enabled: boolean;
  /** Empty: no trial. */
  trial_days: string;
  trial_sites: string;
  /** Product ids, separated by commas or spaces (docs/selling.md, 'Upgrades and downgrades'). */
  upgrade_paths: string;
}

/** POST /v1/software/products/{id}/config: what the update client sees, and where files are kept. */
/**
 * The product's picture on the store (POST and DELETE /v1/products/{id}/image): the server resizes
 * it to 400 and 1200 px and strips its metadata (docs/storefront.md, 'Images').
 */
function ImageForm({ product }: { product: Product }) {
  const client = useQueryClient();
  return (
    <ImageUpload
      id="image-form"
      noun="image"
      send={(file) => upload('/v1/products/{id}/image', { id: product.id }, [], file, () => {}).done}
      remove={() => ok(api.DELETE('/v1/products/{id}/image', { params: { path: { id: product.id } } }))}
      current={product.image ?? ''}
      alt={`${product.name} as the store shows it`}
      imageClass="product-image"
      empty="No image: the store shows a placeholder."
      hint="JPEG, PNG, WebP or GIF, at most 10 MB."
      onSaved={(p) => {
        client.setQueryData(['product', product.id], p);
        void client.invalidateQueries({ queryKey: ['audit-events'] });
      }}
    >
      {product.slug && product.status === 'publish' ? (
        <a href={`/products/${product.slug}`} target="_blank" rel="noreferrer">
          View on the store
        </a>
      ) : null}
    </ImageUpload>
  );
}

/**
 * The icon and banner WordPress shows in its update rows and details (POST and DELETE
 * /v1/software/products/{id}/icon and /banner): the server cuts them to WordPress's sizes
 * (docs/catalogue.md, 'Icons and banners') and answers the software configuration.
 */
function WordPressImages({ product }: { product: Product }) {
  const client = useQueryClient();
  const software = '/v1/software/products/{product_id}' as const;
  const at = { product_id: product.id };
  const onSaved = (saved: SoftwareConfig) => {
    client.setQueryData<Product>(['product', product.id], (p) => (p ? { ...p, ...saved } : p));
    void client.invalidateQueries({ queryKey: ['audit-events'] });
  };
  return (
    <>
      <ImageUpload
        id="icon-form"
        noun="icon"
        send={(file) => upload(`${software}/icon`, at, [], file, () => {}).done}
        remove={() => ok(api.DELETE(`${software}/icon`, { params: { path: at } }))}
        current={product.icon ?? ''}
        preview="icon-128"
        previewWidth={128}
        alt={`${product.name}'s icon in WordPress`}
        imageClass="product-image"
        empty="No icon: WordPress shows its default."
        hint="Square, at least 256×256 px; cut to 128 and 256 px. JPEG, PNG, WebP or GIF, at most 10 MB."
        onSaved={onSaved}
      />
      <ImageUpload
        id="banner-form"
        noun="banner"
        send={(file) => upload(`${software}/banner`, at, [], file, () => {}).done}
        remove={() => ok(api.DELETE(`${software}/banner`, { params: { path: at } }))}
        current={product.banner ?? ''}
        preview="banner-772x250"
        previewWidth={386}
        alt={`${product.name}'s banner in WordPress`}
        imageClass="product-image"
        empty="No banner: WordPress shows none."
        hint="At least 1544×500 px; cut to 772×250 and 1544×500. JPEG, PNG, WebP or GIF, at most 10 MB."
        onSaved={onSaved}
      />
    </>
  );
}

function SoftwareForm({ product }: { product: Product }) {
  const client = useQueryClient();
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState('');
  const {
    register,
    handleSubmit,
    formState: { errors, isSubmitting },
  } = useForm<SoftwareFormValues>({
    defaultValues: {
      slug: product.slug ?? '',
      filename_template: product.filename_template || '{slug}-{version}.zip',
      storage_driver: product.storage_driver ?? '',
      licensing_enabled: product.licensing_enabled === 'no' ? 'no' : 'yes',
      software_enabled: product.software_enabled === 'yes',
      trial_days: product.trial_days === null ? '' : String(product.trial_days),
      trial_sites: String(product.trial_sites),
      upgrade_paths: (product.upgrade_paths ?? []).join(', '),
    },
  });
  const onSubmit = async (f: SoftwareFormValues) => {
    setError(null);
    setNotice('');
    const paths = [
      ...new Set(
        f.upgrade_paths
          .split(/[\s,]+/)
          .filter(Boolean)
          .map(Number),
      ),
    ];
    try {
      const saved = await ok(
        api.POST('/v1/software/products/{product_id}/config', {
          params: { path: { product_id: product.id } },
          body: {
            ...(f.slug ? { slug: f.slug } : {}),
            filename_template: f.filename_template,
            // The select offers the drivers the route accepts.
            storage_driver: f.storage_driver as Body<
              '/v1/software/products/{product_id}/config',
              'post'
            >['storage_driver'],
            licensing_enabled: f.licensing_enabled,
            software_enabled: f.software_enabled ? 'yes' : 'no',
            trial_days: f.trial_days === '' ? null : Number(f.trial_days),
            trial_sites: Number(f.trial_sites),
            // Sent only when changed, so a save of other fields records no change of it.
            ...(paths.join(',') === (product.upgrade_paths ?? []).join(',') ? {} : { upgrade_paths: paths }),
          },
        }),
      );
      client.setQueryData<Product>(['product', product.id], (p) => (p ? { ...p, ...saved } : p));
      await client.invalidateQueries({ queryKey: ['products'] });
      await client.invalidateQueries({ queryKey: ['audit-events'] });
      setNotice('The software configuration is saved.');
    } catch (e) {
      setError(e);
    }
  };
  return (
    <form onSubmit={handleSubmit(onSubmit)} noValidate className="card form" aria-labelledby="software-form">
      <h2 id="software-form">Software configuration</h2>
      <p className="hint">How sites find, license and download this product’s releases.</p>
      <Notice>{notice}</Notice>
      <ErrorNote error={error} />
      <div className="two">
        <TextField
          label="Slug"
          hint="a-z, 0-9 and hyphens; the update client names the product by it."
          error={errors.slug}
          autoComplete="off"
          {...register('slug', {
            pattern: {
              value: /^[a-z0-9-]{1,100}$/,
              message: '1 to 100 characters: a-z, 0-9 and hyphens.',
            },
          })}
        />
        <TextField
          label="File name template"
          hint="Must contain {version} and end in .zip."
          error={errors.filename_template}
          autoComplete="off"
          {...inputLimits('software', 'filename_template')}
          {...register('filename_template', {
            required: 'Enter a template such as {slug}-{version}.zip.',
          })}
        />
      </div>
      <div className="two">
        <Field label="Storage for uploads" hint="Automatic: the private vault, encrypted where it must be.">
          {(p) => (
            <select {...p} {...register('storage_driver')}>
              <option value="">Automatic</option>
              <option value="local">Private vault</option>
              <option value="local_encrypted">Private vault, encrypted</option>
              <option value="external">External links only</option>
            </select>
          )}
        </Field>
        <Field label="Downloads">
          {(p) => (
            <select {...p} {...register('licensing_enabled')}>
              <option value="yes">Need a valid license</option>
              <option value="no">Public (no license needed)</option>
            </select>
          )}
        </Field>
      </div>
      <TrialFields
        days={register('trial_days', TRIAL_DAYS)}
        sites={register('trial_sites', TRIAL_SITES)}
        errors={errors}
      />
      <TextField
        label="Upgrade paths"
        hint="Ids of other products a license of this one may move to, besides its own variations (e.g. 12, 15)."
        error={errors.upgrade_paths}
        autoComplete="off"
        inputMode="numeric"
        {...register('upgrade_paths', {
          pattern: { value: /^\s*(\d+([\s,]+\d+)*)?\s*$/, message: 'Product ids separated by commas.' },
        })}
      />
      <label className="check">
        <input type="checkbox" {...register('software_enabled')} /> Distribute this product’s releases
      </label>
      <div className="buttons">
        <button type="submit" className="primary" disabled={isSubmitting}>
          {isSubmitting ? 'Saving…' : 'Save software configuration'}
        </button>
      </div>
    </form>
  );
}
