import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { Link, useLocation } from 'wouter';
import { api, ok, page } from '../api';
import { day } from '../format';
import { inputLimits } from '../limits';
import type { Coupon } from '../resources';
import { useConfirm } from '../ui/confirm';
import { ErrorNote, Loading, Notice, Page } from '../ui/feedback';
import { SelectField, showFieldErrors, TextField } from '../ui/form';
import { PagedList, useServerList } from '../ui/list';
import { columnsFor } from '../ui/table';

const KINDS: [Coupon['discount_type'], string][] = [
  ['percent', 'Percent off the cart'],
  ['fixed_cart', 'Fixed amount off the cart'],
  ['fixed_product', 'Fixed amount off each product'],
];
const MONEY = { value: /^\d{1,9}(\.\d{1,6})?$/, message: 'An amount such as 10 or 9.99.' };

const col = columnsFor<Coupon>();
const columns = [
  col.accessor('code', {
    header: 'Code',
    cell: (c) => (
      <Link href={`/coupons/${c.row.original.id}`} className="key">
        {c.getValue()}
      </Link>
    ),
  }),
  col.accessor('discount_type', {
    header: 'Discount',
    cell: (c) =>
      c.getValue() === 'percent'
        ? `${c.row.original.amount} %`
        : `${c.row.original.amount} ${c.row.original.currency ?? '(base currency)'} ${c.getValue() === 'fixed_product' ? 'per product' : 'off the cart'}`,
  }),
  col.accessor('usage_count', {
    header: 'Used',
    cell: (c) => `${c.getValue()}${c.row.original.usage_limit ? ` of ${c.row.original.usage_limit}` : ''}`,
  }),
  col.accessor('expires_at', { header: 'Expires', cell: (c) => day(c.getValue(), 'never') }),
  col.accessor('created_at', { header: 'Created', cell: (c) => day(c.getValue()) }),
];

/** Coupons: server pages (GET /v1/coupons, X-WP-Total), newest first. */
export function Coupons() {
  const l = useServerList({
    key: ['coupons'],
    names: [],
    fetchPage: (query) => page(api.GET('/v1/coupons', { params: { query } })),
  });
  return (
    <Page
      title="Coupons"
      actions={
        <Link href="/coupons/new" className="button primary">
          New coupon
        </Link>
      }
    >
      <PagedList what="Coupons" of={l} columns={columns} empty="No coupons yet." />
    </Page>
  );
}

interface CouponForm {
  code: string;
  discount_type: Coupon['discount_type'];
  amount: string;
  expires_on: string;
  usage_limit: string;
  usage_limit_per_user: string;
  minimum_amount: string;
  maximum_amount: string;
  currency: string;
  individual_use: boolean;
  free_shipping: boolean;
}

const toForm = (c: Coupon | null): CouponForm => ({
  code: c?.code ?? '',
  discount_type: c?.discount_type ?? 'percent',
  amount: c?.amount ?? '',
  expires_on: c?.expires_at ? c.expires_at.slice(0, 10) : '',
  usage_limit: c?.usage_limit ? String(c.usage_limit) : '',
  usage_limit_per_user: c?.usage_limit_per_user ? String(c.usage_limit_per_user) : '',
  minimum_amount: c?.minimum_amount ?? '',
  maximum_amount: c?.maximum_amount ?? '',
  currency: c?.currency ?? '',
  individual_use: c?.individual_use ?? false,
  free_shipping: c?.free_shipping ?? false,
});

const orNull = (v: string) => (v.trim() === '' ? null : v.trim());
const countOrNull = (v: string) => (v.trim() === '' ? null : Number(v));

const back = <Link href="/coupons">← Coupons</Link>;

/** A new coupon (POST /v1/coupons) or one coupon (GET, PATCH and DELETE /v1/coupons/{id}). */
export function CouponPage({ id }: { id: number | null }) {
  const valid = id === null || (Number.isInteger(id) && id > 0);
  const coupon = useQuery({
    queryKey: ['coupon', id],
    queryFn: () => ok(api.GET('/v1/coupons/{id}', { params: { path: { id: Number(id) } } })),
    enabled: id !== null && valid,
  });
  if (!valid) {
    return (
      <Page title="Coupon not found" back={back}>
        <p>There is no coupon at this address.</p>
      </Page>
    );
  }
  if (id === null) return <CouponEditor coupon={null} />;
  if (coupon.isPending) return <Loading what="the coupon" />;
  if (!coupon.data) {
    return (
      <Page title="Coupon" back={back}>
        <ErrorNote error={coupon.error} />
      </Page>
    );
  }
  return <CouponEditor coupon={coupon.data} />;
}

function CouponEditor({ coupon }: { coupon: Coupon | null }) {
  const client = useQueryClient();
  const [, navigate] = useLocation();
  const confirm = useConfirm();
  const [notice, setNotice] = useState('');
  const [error, setError] = useState<unknown>(null);
  const {
    register,
    handleSubmit,
    watch,
    setError: setFieldError,
    formState: { errors, isSubmitting },
  } = useForm<CouponForm>({ values: toForm(coupon) });
  const percent = watch('discount_type') === 'percent';

  const onSubmit = async (f: CouponForm) => {
    setError(null);
    setNotice('');
    const body = {
      code: f.code.trim(),
      discount_type: f.discount_type,
      amount: f.amount.trim(),
      expires_at: f.expires_on ? `${f.expires_on}T23:59:59Z` : null,
      usage_limit: countOrNull(f.usage_limit),
      usage_limit_per_user: countOrNull(f.usage_limit_per_user),
      minimum_amount: orNull(f.minimum_amount),
      maximum_amount: orNull(f.maximum_amount),
      currency: orNull(f.currency.toUpperCase()),
      individual_use: f.individual_use,
      free_shipping: f.free_shipping,
    };
    try {
      if (coupon) {
        client.setQueryData(
          ['coupon', coupon.id],
          await ok(api.PATCH('/v1/coupons/{id}', { params: { path: { id: coupon.id } }, body })),
        );
        setNotice('The coupon is saved.');
      } else {
        const created = await ok(api.POST('/v1/coupons', { body }));
        navigate(`/coupons/${created.id}`, { replace: true });
      }
      await client.invalidateQueries({ queryKey: ['coupons'] });
    } catch (e) {
      showFieldErrors(e, setFieldError, Object.keys(toForm(null)), {
        rename: { expires_at: 'expires_on' },
        codes: { coupon_exists: 'code' },
      });
      setError(e);
    }
  };
  const remove = () =>
    coupon &&
    confirm.ask({
      title: `Delete the coupon “${coupon.code}”?`,
      body: <p>Shoppers can no longer use it. This cannot be undone.</p>,
      confirmLabel: 'Delete coupon',
      danger: true,
      action: async () => {
        await ok(api.DELETE('/v1/coupons/{id}', { params: { path: { id: coupon.id } } }));
        await client.invalidateQueries({ queryKey: ['coupons'] });
        navigate('/coupons', { replace: true });
      },
    });

  return (
    <Page
      title={coupon ? `Coupon ${coupon.code}` : 'New coupon'}
      back={back}
      actions={
        coupon ? (
          <button type="button" className="danger" onClick={remove}>
            Delete
          </button>
        ) : null
      }
    >
      <form onSubmit={handleSubmit(onSubmit)} noValidate className="card form" aria-label="Coupon">
        <Notice>{notice}</Notice>
        <ErrorNote error={error} />
        {coupon ? <p className="hint">Used {coupon.usage_count} times.</p> : null}
        <div className="two">
          <TextField
            label="Code"
            hint="Shoppers type it; stored in lower case."
            error={errors.code}
            autoComplete="off"
            {...inputLimits('coupon', 'code')}
            {...register('code', { required: 'Enter the code.' })}
          />
          <SelectField label="Discount" choices={KINDS} {...register('discount_type')} />
        </div>
        <div className="two">
          <TextField
            label={percent ? 'Percent' : 'Amount'}
            error={errors.amount}
            inputMode="decimal"
            {...inputLimits('coupon', 'amount')}
            {...register('amount', { required: 'Enter the amount.', pattern: MONEY })}
          />
          <TextField
            label="Currency (optional)"
            hint="Empty = the base currency."
            error={errors.currency}
            maxLength={3}
            autoComplete="off"
            {...register('currency')}
          />
        </div>
        <div className="two">
          <TextField
            label="Expires (end of day, UTC; optional)"
            error={errors.expires_on}
            type="date"
            {...register('expires_on')}
          />
          <TextField
            label="Uses in all (optional)"
            error={errors.usage_limit}
            type="number"
            inputMode="numeric"
            {...inputLimits('coupon', 'usage_limit')}
            {...register('usage_limit')}
          />
        </div>
        <div className="two">
          <TextField
            label="Uses per customer (optional)"
            error={errors.usage_limit_per_user}
            type="number"
            inputMode="numeric"
            {...inputLimits('coupon', 'usage_limit_per_user')}
            {...register('usage_limit_per_user')}
          />
          <TextField
            label="Minimum spend (optional)"
            error={errors.minimum_amount}
            inputMode="decimal"
            {...inputLimits('coupon', 'minimum_amount')}
            {...register('minimum_amount', { pattern: MONEY })}
          />
        </div>
        <div className="two">
          <TextField
            label="Maximum spend (optional)"
            error={errors.maximum_amount}
            inputMode="decimal"
            {...inputLimits('coupon', 'maximum_amount')}
            {...register('maximum_amount', { pattern: MONEY })}
          />
        </div>
        <label className="check">
          <input type="checkbox" {...register('individual_use')} /> Cannot be combined with other coupons
        </label>
        <label className="check">
          <input type="checkbox" {...register('free_shipping')} /> Gives free shipping
        </label>
        <div className="buttons">
          <button type="submit" className="primary" disabled={isSubmitting}>
            {coupon ? 'Save coupon' : 'Create coupon'}
          </button>
        </div>
      </form>
      {confirm.dialog}
    </Page>
  );
}
