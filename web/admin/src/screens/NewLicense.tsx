import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { Link, useLocation } from 'wouter';
import { post } from '../api';
import type { License, User } from '../types';
import { ErrorNote, Page } from '../ui/feedback';
import { Field } from '../ui/form';
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
 * Issue a license by hand (POST /v1/licenses). The API has no list of customers yet, so the
 * customer is named by number, or created here first (POST /v1/users).
 */
export function NewLicense() {
  const [, navigate] = useLocation();
  const client = useQueryClient();
  const products = useProductChoices();
  const [error, setError] = useState<unknown>(null);
  const {
    register,
    handleSubmit,
    watch,
    setValue,
    formState: { errors, isSubmitting },
  } = useForm<Form>({
    defaultValues: { customer: 'new', product_id: '', variation_id: '', activation_limit: '', expires: '' },
  });
  const productId = watch('product_id');
  const customer = watch('customer');
  const product = products.data?.find((p) => String(p.id) === productId);

  const onSubmit = async (f: Form) => {
    setError(null);
    try {
      let userId = Number(f.user_id);
      if (f.customer === 'new') {
        const user = await post<User>('/users', {
          email: f.email.trim(),
          password: f.password,
          role: 'customer',
          ...(f.first_name.trim() ? { first_name: f.first_name.trim() } : {}),
          ...(f.last_name.trim() ? { last_name: f.last_name.trim() } : {}),
        });
        userId = user.id;
        // The account exists now: should the license be refused, trying again must not create it twice.
        setValue('customer', 'existing');
        setValue('user_id', String(user.id));
      }
      const license = await post<License>('/licenses', {
        product_id: Number(f.product_id),
        user_id: userId,
        ...(f.variation_id ? { variation_id: Number(f.variation_id) } : {}),
        ...(f.activation_limit !== '' ? { activation_limit: Number(f.activation_limit) } : {}),
        ...(f.expires ? { usage_expires_at: `${f.expires}T23:59:59Z` } : {}),
      });
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
            <input type="radio" value="existing" {...register('customer')} /> An existing customer, by number
          </label>
          {customer === 'existing' ? (
            <Field
              label="Customer number"
              hint="Shown on each of the customer's licenses."
              error={errors.user_id}
            >
              {(p) => (
                <input
                  {...p}
                  inputMode="numeric"
                  {...register('user_id', {
                    required: 'Enter the customer number.',
                    pattern: { value: /^[1-9]\d*$/, message: 'A customer number is a whole number.' },
                  })}
                />
              )}
            </Field>
          ) : (
            <>
              <Field label="Email" error={errors.email}>
                {(p) => (
                  <input
                    {...p}
                    type="email"
                    autoComplete="off"
                    {...register('email', { required: 'Enter the customer’s email address.' })}
                  />
                )}
              </Field>
              <div className="two">
                <Field label="First name (optional)" error={errors.first_name}>
                  {(p) => <input {...p} autoComplete="off" {...register('first_name')} />}
                </Field>
                <Field label="Last name (optional)" error={errors.last_name}>
                  {(p) => <input {...p} autoComplete="off" {...register('last_name')} />}
                </Field>
              </div>
              <Field
                label="Password for the customer’s account"
                hint="At least 8 characters; the customer signs in with it at /account."
                error={errors.password}
              >
                {(p) => (
                  <input
                    {...p}
                    type="password"
                    autoComplete="new-password"
                    {...register('password', {
                      required: 'Choose a password.',
                      minLength: { value: 8, message: 'At least 8 characters.' },
                    })}
                  />
                )}
              </Field>
            </>
          )}
        </fieldset>
        <div className="two">
          <Field
            label="Activation limit (optional)"
            hint="Sites at once; 0 = unlimited; empty = the product's limit."
            error={errors.activation_limit}
          >
            {(p) => (
              <input
                {...p}
                type="number"
                min={0}
                inputMode="numeric"
                {...register('activation_limit', {
                  pattern: { value: /^\d*$/, message: 'A whole number of sites.' },
                })}
              />
            )}
          </Field>
          <Field label="Works until (optional)" hint="End of that day, UTC; empty = as the product says.">
            {(p) => <input {...p} type="date" {...register('expires')} />}
          </Field>
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
