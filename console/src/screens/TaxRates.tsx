import { useForm } from 'react-hook-form';
import { api, type Body, ok } from '../api';
import { inputLimits } from '../limits';
import type { TaxRate } from '../resources';
import { EditButtons, useCollection, useEditing } from '../ui/collection';
import { ErrorNote, Notice, Page } from '../ui/feedback';
import { Field, showFieldErrors, TextField } from '../ui/form';
import { editDeleteColumn, WholeList } from '../ui/list';
import { columnsFor } from '../ui/table';

interface TaxForm {
  name: string;
  country: string;
  state: string;
  postcode: string;
  rate: string;
  priority: string;
  shipping: boolean;
  compound: boolean;
}
const EMPTY: TaxForm = {
  name: '',
  country: '',
  state: '',
  postcode: '',
  rate: '',
  priority: '1',
  shipping: false,
  compound: false,
};

/** A stored rate as the form's values. */
const formOf = (t: TaxRate): TaxForm => ({
  name: t.name,
  country: t.country,
  state: t.state,
  postcode: t.postcode,
  rate: t.rate,
  priority: String(t.priority),
  shipping: t.shipping,
  compound: t.compound,
});

/**
 * Tax rates (GET, POST, PATCH and DELETE /v1/tax-rates): the whole list, by priority. **Edit** on
 * a row loads the rate into the form, which then saves it with PATCH instead of creating one.
 */
export function TaxRates() {
  const rates = useCollection('/tax-rates', 'tax rate', {
    list: () => ok(api.GET('/v1/tax-rates')),
    create: (body: Body<'/v1/tax-rates', 'post'>) => ok(api.POST('/v1/tax-rates', { body })),
    update: (id, body: Body<'/v1/tax-rates/{id}', 'patch'>) =>
      ok(api.PATCH('/v1/tax-rates/{id}', { params: { path: { id } }, body })),
    remove: (id) => ok(api.DELETE('/v1/tax-rates/{id}', { params: { path: { id } } })),
  });
  const {
    register,
    handleSubmit,
    reset,
    setError: setFieldError,
    formState: { errors, isSubmitting },
  } = useForm<TaxForm>({ defaultValues: EMPTY });
  const { error, setError, editing, formRef, edit, stopEditing } = useEditing({
    reset,
    empty: EMPTY,
    formOf,
    setNotice: rates.setNotice,
  });

  const onSubmit = async (f: TaxForm) => {
    setError(null);
    const fields = {
      name: f.name.trim(),
      country: f.country.trim().toUpperCase(),
      rate: f.rate.trim(),
      priority: Number(f.priority),
      shipping: f.shipping,
      compound: f.compound,
    };
    try {
      if (editing) {
        // Every field, so a cleared state or postcode is saved as cleared ("" = any).
        await rates.update(editing.id, { ...fields, state: f.state.trim(), postcode: f.postcode.trim() });
      } else {
        await rates.create({
          ...fields,
          ...(f.state.trim() ? { state: f.state.trim() } : {}),
          ...(f.postcode.trim() ? { postcode: f.postcode.trim() } : {}),
        });
      }
      stopEditing();
    } catch (e) {
      showFieldErrors(e, setFieldError, Object.keys(EMPTY), {
        codes: { invalid_country: 'country', invalid_tax_rate: 'rate' },
      });
      setError(e);
    }
  };
  const remove = (t: TaxRate) => rates.remove(t, 'Orders placed from now on no longer pay it.');

  const col = columnsFor<TaxRate>();
  const columns = [
    col.accessor('name', { header: 'Name' }),
    col.accessor('country', { header: 'Country' }),
    col.accessor('state', { header: 'State', cell: (c) => c.getValue() || 'any' }),
    col.accessor('postcode', { header: 'Postcodes', cell: (c) => c.getValue() || 'any' }),
    col.accessor('rate', { header: 'Rate', cell: (c) => `${c.getValue()} %` }),
    col.accessor('priority', { header: 'Priority' }),
    col.display({
      id: 'applies',
      header: 'Also',
      cell: (c) =>
        [c.row.original.shipping ? 'on shipping' : '', c.row.original.compound ? 'compound' : '']
          .filter(Boolean)
          .join(', ') || '—',
    }),
    editDeleteColumn(edit, remove),
  ];

  return (
    <Page title="Tax rates">
      <form
        ref={formRef}
        onSubmit={handleSubmit(onSubmit)}
        noValidate
        className="card form"
        aria-labelledby="new-tax-rate"
      >
        <h2 id="new-tax-rate">{editing ? `Edit the tax rate “${editing.name}”` : 'New tax rate'}</h2>
        <ErrorNote error={error} />
        <div className="two">
          <TextField
            label="Name"
            hint="Shown on orders, e.g. “VAT”."
            error={errors.name}
            {...inputLimits('taxRate', 'name')}
            {...register('name', { required: 'Name it.' })}
          />
          <Field label="Rate (%)" hint="0 to 100, up to 4 decimals." error={errors.rate}>
            {(p) => (
              <input {...p} inputMode="decimal" {...register('rate', { required: 'Enter the rate.' })} />
            )}
          </Field>
        </div>
        <div className="two">
          <TextField
            label="Country"
            hint="Two letters, e.g. DE."
            error={errors.country}
            maxLength={2}
            autoComplete="off"
            {...register('country', { required: 'Enter a country.' })}
          />
          <TextField
            label="State (optional)"
            error={errors.state}
            {...inputLimits('taxRate', 'state')}
            {...register('state')}
          />
        </div>
        <div className="two">
          <Field
            label="Postcodes (optional)"
            hint={
              <>
                <code>;</code> separates, <code>...</code> spans a range, <code>*</code> matches any.
              </>
            }
            error={errors.postcode}
          >
            {(p) => <input {...p} {...inputLimits('taxRate', 'postcode')} {...register('postcode')} />}
          </Field>
          <Field label="Priority" error={errors.priority}>
            {(p) => (
              <input {...p} type="number" {...inputLimits('taxRate', 'priority')} {...register('priority')} />
            )}
          </Field>
        </div>
        <label className="check">
          <input type="checkbox" {...register('shipping')} /> Also taxes shipping
        </label>
        <label className="check">
          <input type="checkbox" {...register('compound')} /> Compound (taxes the other taxes too)
        </label>
        <EditButtons what="tax rate" editing={!!editing} isSubmitting={isSubmitting} onCancel={stopEditing} />
      </form>
      <Notice>{rates.notice}</Notice>
      <WholeList what="Tax rates" of={rates} columns={columns} empty="No tax rates: orders pay no tax." />
      {rates.dialog}
    </Page>
  );
}
