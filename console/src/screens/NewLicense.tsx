import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { useForm } from 'react-hook-form';
import { Link, useLocation, useSearch } from 'wouter';
import { api, ok, page } from '../api';
import { ErrorNote, Page } from '../ui/feedback';
import { Field, TextField } from '../ui/form';
import { SITES, SitesField } from '../ui/product-fields';
import { positive } from '../ui/url';
import { fullName } from './Customers';
import { useProductChoices } from './Products';

interface Form {
  product_id: string;
  variation_id: string;
  customer: 'existing' | 'new';
  user_id: string;
  email: string;
  first_name: string;
  last_name: string;
  password: string;
  activation_limit: string;
  expires: string;
}

/**
 * Issue a license by hand (POST /v1/licenses), to an existing customer found by email or name
 * (GET /v1/users?role=customer&search=) or to one created here first (POST /v1/users). A
 * customer's page opens it with `?user_id=` to start with that customer chosen.
 */
export function NewLicense() {
  const [, navigate] = useLocation();
  const client = useQueryClient();
  const products = useProductChoices();
  const [error, setError] = useState<unknown>(null);
  const given = positive(new URLSearchParams(useSearch()).get('user_id'), 0);
  const [term, setTerm] = useState('');
  const [typed, setTyped] = useState('');
  const searchId = useId();
  const found = useQuery({
    queryKey: ['users', 'customer', { search: term, per_page: 10 }],
    queryFn: () =>
      page(
        api.GET('/v1/users', {
          params: { query: { role: 'customer', search: term, page: 1, per_page: 10 } },
        }),
      ),
    enabled: term !== '',
  });
  const preset = useQuery({
    queryKey: ['user', given],
    queryFn: () => ok(api.GET('/v1/users/{id}', { params: { path: { id: given } } })),
    enabled: given > 0,
  });
  const {
    register,
    handleSubmit,
    watch,
    setValue,
    formState: { errors, isSubmitting },
  } = useForm<Form>({
    defaultValues: {
      customer: given ? 'existing' : 'new',
      user_id: given ? String(given) : '',
      product_id: '',
      variation_id: '',
      activation_limit: '',
      expires: '',
    },
  });
  const productId = watch('product_id');
  const customer = watch('customer');
  const product = products.data?.find((p) => String(p.id) === productId);
  const userId = watch('user_id');
  // The choices: the search's customers, and the one already chosen (given, or just created).
  const choices = [...(found.data?.rows ?? [])];
  const kept = preset.data && preset.data.role === 'customer' ? preset.data : null;
  if (kept && !choices.some((u) => u.id === kept.id)) choices.unshift(kept);
  const search = () => setTerm(typed.trim());

  const onSubmit = async (f: Form) => {
    setError(null);
    try {
      let userId = Number(f.user_id);
      if (f.customer === 'new') {
        const user = await ok(
          api.POST('/v1/users', {
            body: {
              email: f.email.trim(),
              password: f.password,
              role: 'customer',
              ...(f.first_name.trim() ? { first_name: f.first_name.trim() } : {}),
              ...(f.last_name.trim() ? { last_name: f.last_name.trim() } : {}),
            },
          }),
        );
        userId = user.id;
        // The account exists now: should the license be refused, trying again must not create it twice.
        setValue('customer', 'existing');
        setValue('user_id', String(user.id));
      }
      const license = await ok(
        api.POST('/v1/licenses', {
          body: {
            product_id: Number(f.product_id),
            user_id: userId,
            ...(f.variation_id ? { variation_id: Number(f.variation_id) } : {}),
            ...(f.activation_limit !== '' ? { activation_limit: Number(f.activation_limit) } : {}),
            ...(f.expires ? { usage_expires_at: `${f.expires}T23:59:59Z` } : {}),
          },
        }),
      );
      await client.invalidateQueries({ queryKey: ['licenses'] });
      navigate(`/licenses/${license.id}`);
    } catch (e) {
      setError(e);
    }
  };

  return (
    <Page title="New license" back={<Link href="/licenses">← Licenses</Link>}>
      <form onSubmit={handleSubmit(onSubmit)} noValidate className="card form">
        <ErrorNote error={error} />
        <Field label="Product" error={errors.product_id}>
          {(p) => (
            <select {...p} {...register('product_id', { required: 'Choose the product.' })}>
              <option value="">Choose…</option>
              {(products.data ?? []).map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name}
                </option>
              ))}
            </select>
          )}
        </Field>
        {product && product.variations.length > 0 ? (
          <Field label="Variation" error={errors.variation_id}>
            {(p) => (
              <select {...p} {...register('variation_id', { required: 'Choose the variation.' })}>
                <option value="">Choose…</option>
                {product.variations.map((v) => (
                  <option key={v.id} value={v.id}>
                    {v.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
        ) : null}
        <fieldset>
          <legend>Customer</legend>
          <label className="check">
            <input type="radio" value="new" {...register('customer')} /> A new customer account
          </label>
          <label className="check">
            <input type="radio" value="existing" {...register('customer')} /> An existing customer
          </label>
          {customer === 'existing' ? (
            <div className="customer-search">
              <div className="search-group">
                <div className="field">
                  <label htmlFor={searchId}>Find the customer</label>
                  <input
                    id={searchId}
                    type="search"
                    value={typed}
                    placeholder="Email or name"
                    autoComplete="off"
                    onChange={(e) => setTyped(e.target.value)}
                    onKeyDown={(e) => {
                      // Enter searches; it must not submit the license form.
                      if (e.key === 'Enter') {
                        e.preventDefault();
                        search();
                      }
                    }}
                  />
                </div>
                <button type="button" onClick={search}>
                  Search
                </button>
              </div>
              <ErrorNote error={found.error} />
              {found.isFetching ? (
                <p className="loading" role="status">
                  Searching…
                </p>
              ) : term && found.data ? (
                <p role="status">
                  {found.data.total === 0
                    ? `No customer matches “${term}”.`
                    : found.data.total > found.data.rows.length
                      ? `The first ${found.data.rows.length} of ${found.data.total} customers matching “${term}”: narrow the search if yours is not here.`
                      : `${found.data.total} customer${found.data.total === 1 ? '' : 's'} matching “${term}”.`}
                </p>
              ) : null}
              {choices.length > 0 ? (
                <fieldset
                  className="choices"
                  aria-describedby={errors.user_id ? `${searchId}-error` : undefined}
                >
                  <legend>Choose the customer</legend>
                  {choices.map((u) => (
                    <label key={u.id} className="check">
                      <input
                        type="radio"
                        value={String(u.id)}
                        {...register('user_id', { required: 'Find and choose the customer.' })}
                      />{' '}
                      {u.email}
                      {fullName(u) ? <span className="muted"> {fullName(u)}</span> : null}
                      <span className="muted"> #{u.id}</span>
                    </label>
                  ))}
                </fieldset>
              ) : (
                <input
                  type="hidden"
                  {...register('user_id', { required: 'Find and choose the customer.' })}
                />
              )}
              {errors.user_id ? (
                <p className="field-error" id={`${searchId}-error`}>
                  {errors.user_id.message}
                </p>
              ) : null}
              {userId && !choices.some((u) => String(u.id) === userId) ? (
                <p className="muted">Chosen: customer #{userId}.</p>
              ) : null}
            </div>
          ) : (
            <>
              <TextField
                label="Email"
                error={errors.email}
                type="email"
                autoComplete="off"
                {...register('email', { required: 'Enter the customer’s email address.' })}
              />
              <div className="two">
                <TextField
                  label="First name (optional)"
                  error={errors.first_name}
                  autoComplete="off"
                  {...register('first_name')}
                />
                <TextField
                  label="Last name (optional)"
                  error={errors.last_name}
                  autoComplete="off"
                  {...register('last_name')}
                />
              </div>
              <TextField
                label="Password for the customer’s account"
                hint="At least 8 characters; the customer signs in with it at /account."
                error={errors.password}
                type="password"
                autoComplete="new-password"
                {...register('password', {
                  required: 'Choose a password.',
                  minLength: { value: 8, message: 'At least 8 characters.' },
                })}
              />
            </>
          )}
        </fieldset>
        <div className="two">
          <SitesField
            label="Activation limit (optional)"
            hint="Sites at once; 0 = unlimited; empty = the product's limit."
            field={register('activation_limit', SITES)}
            error={errors.activation_limit}
          />
          <TextField
            label="Works until (optional)"
            hint="End of that day, UTC; empty = as the product says."
            type="date"
            {...register('expires')}
          />
        </div>
        <div className="buttons">
          <button type="submit" className="primary" disabled={isSubmitting}>
            {isSubmitting ? 'Issuing…' : 'Issue license'}
          </button>
          <Link href="/licenses" className="button">
            Cancel
          </Link>
        </div>
      </form>
    </Page>
  );
}
