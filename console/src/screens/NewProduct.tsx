import { useQueryClient } from '@tanstack/react-query';
import { useRef, useState } from 'react';
import { useForm } from 'react-hook-form';
import { useLocation } from 'wouter';
// The server's own slug of a name, shown until the owner types one.
import { slugBase } from '../../../src/modules/catalogue/slug.js';
import { ApiError, api, type Body, ok } from '../api';
import { inputLimits } from '../limits';
import type { Product } from '../resources';
import { ErrorNote } from '../ui/feedback';
import { Field, TextField } from '../ui/form';
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

/**
 * A new product in one form (docs/admin.md, 'Products'): what it is and costs, and for software
 * its sites per license, its updates period in words and its download name, saved in one action.
 * Words, not the API's terms: "1 year of updates and support" is the entitlement policy
 * `{usage: lifetime, updates: 365 days, support: 365 days}`; "Sites per license" the activation limit.
 */
interface NewProductValues {
  name: string;
  short_description: string;
  price: string;
  billing: 'once' | 'year' | 'month';
  status: 'publish' | 'draft';
  software: boolean;
  slug: string;
  sites: string;
  updates: 'year' | 'lifetime' | 'days';
  updates_days: string;
  /** Empty: no trial (docs/selling.md, 'Trials'). */
  trial_days: string;
  trial_sites: string;
}

const SLUG = { value: /^[a-z0-9-]{1,100}$/, message: '1 to 100 characters: a-z, 0-9 and hyphens.' };

/** The updates choice as the entitlement policy the API stores (docs/catalogue.md). */
function policyOf(f: NewProductValues): Body<'/v1/products', 'post'>['entitlement_policy'] {
  const usage = { mode: f.billing === 'once' ? ('lifetime' as const) : ('subscription' as const) };
  if (f.updates === 'lifetime') return { usage, updates: { mode: 'license' } };
  const days = f.updates === 'year' ? 365 : Number(f.updates_days);
  return { usage, updates: { mode: 'days', days }, support: { mode: 'days', days } };
}

/** Why the software step failed, at the download name when the server named it. */
const SLUG_WORDS: Record<string, string> = {
  slug_taken: 'Another product in the store already uses this download name. Choose another.',
  invalid_slug: '1 to 100 characters: a-z, 0-9 and hyphens.',
};

export function NewProductForm() {
  const client = useQueryClient();
  const [, navigate] = useLocation();
  const [error, setError] = useState<unknown>(null);
  /** The product once the first step saved it: a retry finishes the steps that failed. */
  const created = useRef<Product | null>(null);
  const slugEdited = useRef(false);
  const {
    register,
    handleSubmit,
    watch,
    setValue,
    setError: setFieldError,
    formState: { errors, isSubmitting },
  } = useForm<NewProductValues>({
    defaultValues: {
      name: '',
      short_description: '',
      price: '',
      billing: 'once',
      status: 'publish',
      software: true,
      slug: '',
      sites: '1',
      updates: 'year',
      updates_days: '',
      trial_days: '',
      trial_sites: '1',
    },
  });
  const software = watch('software');
  const billing = watch('billing');
  const updates = watch('updates');
  const name = register('name', { required: 'Enter the product’s name.' });
  const slug = register('slug', { required: software ? 'Enter a download name.' : false, pattern: SLUG });

  const onSubmit = async (f: NewProductValues) => {
    setError(null);
    let product = created.current;
    try {
      if (!product) {
        product = await ok(
          api.POST('/v1/products', {
            body: {
              name: f.name.trim(),
              short_description: f.short_description.trim(),
              price: f.price,
              type: f.billing === 'once' ? 'simple' : 'subscription',
              ...(f.billing === 'once' ? {} : { subscription: { period: f.billing, interval: 1 } }),
              // Software is published once its download name is set: never on sale without it.
              status: f.software ? 'draft' : f.status,
              virtual: true,
              licensing_enabled: 'yes',
              activation_limit: f.sites === '' ? null : Number(f.sites),
              entitlement_policy: policyOf(f),
            },
          }),
        );
        created.current = product;
      }
    } catch (e) {
      setError(e);
      return;
    }
    if (f.software) {
      try {
        const at = { path: { id: product.id } };
        await ok(
          api.POST('/v1/software/products/{product_id}/config', {
            params: { path: { product_id: product.id } },
            body: {
              slug: f.slug,
              software_enabled: 'yes',
              licensing_enabled: 'yes',
              trial_days: f.trial_days === '' ? null : Number(f.trial_days),
              trial_sites: Number(f.trial_sites),
            },
          }),
        );
        if (f.status === 'publish')
          await ok(api.PATCH('/v1/products/{id}', { params: at, body: { status: 'publish' } }));
      } catch (e) {
        // The product exists as a draft: the owner reads so, at the field, and creating again finishes it.
        const code = e instanceof ApiError ? e.code : '';
        setFieldError('slug', {
          message: `${SLUG_WORDS[code] ?? (e instanceof Error ? e.message : 'The download settings were not saved.')} The product is saved as a draft, without its download settings: correct this and create again to finish.`,
        });
        return;
      }
    }
    await client.invalidateQueries({ queryKey: ['products'] });
    await client.invalidateQueries({ queryKey: ['audit-events'] });
    navigate(`/products/${product.id}?created=1`);
  };

  return (
    <form
      onSubmit={handleSubmit(onSubmit)}
      noValidate
      className="card form"
      aria-labelledby="new-product-form"
    >
      <h2 id="new-product-form">Product</h2>
      <ErrorNote error={error} />
      <TextField
        label="Name"
        error={errors.name}
        {...inputLimits('product', 'name')}
        {...name}
        onChange={(e) => {
          void name.onChange(e);
          if (!slugEdited.current) setValue('slug', slugBase(e.target.value));
        }}
      />
      <ShortDescriptionField
        field={register('short_description', SHORT_DESCRIPTION)}
        error={errors.short_description}
      />
      <div className="two">
        <TextField
          label="Price"
          hint="In the store’s base currency, e.g. 49.00."
          error={errors.price}
          inputMode="decimal"
          {...register('price', { required: 'Enter a price.', pattern: PRICE })}
        />
        <Field label="Payment">
          {(p) => (
            <select {...p} {...register('billing')}>
              <option value="once">One payment</option>
              <option value="year">Renews every year</option>
              <option value="month">Renews every month</option>
            </select>
          )}
        </Field>
      </div>
      <div className="two">
        <SitesField
          label="Sites per license"
          hint="How many websites one license can be active on at once. 0 = unlimited; empty = the store’s default."
          field={register('sites', SITES)}
          error={errors.sites}
        />
        <Field
          label="Updates"
          hint={
            billing === 'once'
              ? 'How long a buyer receives new versions (and support) after buying.'
              : 'How long a buyer receives new versions (and support) while the subscription runs.'
          }
        >
          {(p) => (
            <select {...p} {...register('updates')}>
              <option value="year">1 year of updates and support</option>
              <option value="lifetime">
                {billing === 'once' ? 'Lifetime updates' : 'Updates while the subscription is active'}
              </option>
              <option value="days">A number of days of updates and support</option>
            </select>
          )}
        </Field>
      </div>
      {updates === 'days' ? (
        <NumberField
          label="Days of updates and support"
          field={register('updates_days', {
            required: 'How many days?',
            pattern: { value: /^[1-9]\d*$/, message: 'A whole number of days from 1.' },
            validate: (v) => Number(v) <= 36500 || 'At most 36500 days.',
          })}
          error={errors.updates_days}
          min={1}
          max={36500}
        />
      ) : null}
      <fieldset>
        <legend>Software</legend>
        <label className="check">
          <input type="checkbox" {...register('software')} /> Buyers download this product and its updates (a
          WordPress plugin or theme, or other software)
        </label>
        {software ? (
          <TextField
            label="Download name"
            hint="How sites’ update checks name this product: a-z, 0-9 and hyphens. Made from the name; change it to match your plugin’s folder."
            error={errors.slug}
            autoComplete="off"
            {...inputLimits('software', 'slug')}
            {...slug}
            onChange={(e) => {
              slugEdited.current = true;
              void slug.onChange(e);
            }}
          />
        ) : null}
        {software ? (
          <TrialFields
            days={register('trial_days', TRIAL_DAYS)}
            sites={register('trial_sites', TRIAL_SITES)}
            errors={errors}
          />
        ) : null}
      </fieldset>
      <Field label="In the store">
        {(p) => (
          <select {...p} {...register('status')}>
            <option value="publish">On sale now</option>
            <option value="draft">Hidden (draft)</option>
          </select>
        )}
      </Field>
      <div className="buttons">
        <button type="submit" className="primary" disabled={isSubmitting}>
          {isSubmitting ? 'Creating…' : 'Create product'}
        </button>
      </div>
    </form>
  );
}
