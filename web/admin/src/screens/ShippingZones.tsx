import { useState } from 'react';
import { useFieldArray, useForm } from 'react-hook-form';
import { ApiError } from '../api';
import type { ShippingZone } from '../types';
import { useCollection } from '../ui/collection';
import { ErrorNote, Notice, Page } from '../ui/feedback';
import { Field } from '../ui/form';
import { RowButton, WholeList } from '../ui/list';
import { columnsFor } from '../ui/table';

const METHODS: [string, string][] = [
  ['flat_rate', 'Flat rate'],
  ['free_shipping', 'Free shipping'],
  ['local_pickup', 'Local pickup'],
];

interface ZoneForm {
  name: string;
  regions: string;
  methods: { method_id: string; title: string; cost: string; min_amount: string }[];
}
const EMPTY: ZoneForm = { name: '', regions: '', methods: [] };

/** `DE, FR, US:CA` → the API's regions: a country, or a country and a state after a colon. */
const regionsOf = (text: string) =>
  text
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean)
    .map((r) => {
      const [country = '', state = ''] = r.split(':').map((s) => s.trim());
      return state ? { country: country.toUpperCase(), state } : { country: country.toUpperCase() };
    });

/**
 * Shipping zones (GET, POST and DELETE /v1/shipping-zones): the whole list, in creation order.
 * The API cannot change a zone (docs/admin.md, 'Not yet in the API'): delete it and create it again.
 */
export function ShippingZones() {
  const zones = useCollection<ShippingZone>('/shipping-zones', 'shipping zone');
  const [error, setError] = useState<unknown>(null);
  const {
    register,
    control,
    handleSubmit,
    reset,
    setError: setFieldError,
    formState: { errors, isSubmitting },
  } = useForm<ZoneForm>({ defaultValues: EMPTY });
  const methods = useFieldArray({ control, name: 'methods' });

  const onSubmit = async (f: ZoneForm) => {
    setError(null);
    try {
      await zones.create({
        name: f.name.trim(),
        regions: regionsOf(f.regions),
        methods: f.methods.map((m) => ({
          method_id: m.method_id,
          title: m.title.trim(),
          ...(m.cost.trim() ? { cost: m.cost.trim() } : {}),
          ...(m.min_amount.trim() ? { min_amount: m.min_amount.trim() } : {}),
        })),
      });
      reset(EMPTY);
    } catch (e) {
      if (e instanceof ApiError)
        for (const [name, why] of Object.entries(e.params)) {
          const top = name.split('.')[0];
          if (top === 'name' || top === 'regions') setFieldError(top, { message: String(why) });
        }
      setError(e);
    }
  };
  const remove = (z: ShippingZone) => zones.remove(z, 'Its regions and methods go with it.');

  const col = columnsFor<ShippingZone>();
  const columns = [
    col.accessor('name', { header: 'Name' }),
    col.display({
      id: 'regions',
      header: 'Regions',
      cell: (c) =>
        c.row.original.regions.map((r) => (r.state ? `${r.country}:${r.state}` : r.country)).join(', '),
    }),
    col.display({
      id: 'methods',
      header: 'Methods',
      cell: (c) =>
        c.row.original.methods
          .map(
            (m) => `${m.title}${m.cost ? ` (${m.cost})` : ''}${m.min_amount ? ` from ${m.min_amount}` : ''}`,
          )
          .join(', ') || 'none',
    }),
    col.display({
      id: 'actions',
      header: 'Actions',
      cell: (c) => (
        <RowButton label="Delete" row={c.row.original.name} danger onClick={() => remove(c.row.original)} />
      ),
    }),
  ];

  return (
    <Page title="Shipping zones">
      <form onSubmit={handleSubmit(onSubmit)} noValidate className="card form" aria-labelledby="new-zone">
        <h2 id="new-zone">New shipping zone</h2>
        <ErrorNote error={error} />
        <div className="two">
          <Field label="Name" error={errors.name}>
            {(p) => <input {...p} {...register('name', { required: 'Name it.' })} />}
          </Field>
          <Field
            label="Regions"
            hint="Countries, commas between: DE, FR, US:CA (a state after a colon)."
            error={errors.regions}
          >
            {(p) => (
              <input
                {...p}
                autoComplete="off"
                {...register('regions', { required: 'Name at least one country.' })}
              />
            )}
          </Field>
        </div>
        {methods.fields.map((m, i) => (
          <fieldset key={m.id}>
            <legend>Method {i + 1}</legend>
            <div className="two">
              <Field label="Kind">
                {(p) => (
                  <select {...p} {...register(`methods.${i}.method_id`)}>
                    {METHODS.map(([value, words]) => (
                      <option key={value} value={value}>
                        {words}
                      </option>
                    ))}
                  </select>
                )}
              </Field>
              <Field label="Title" error={errors.methods?.[i]?.title}>
                {(p) => (
                  <input {...p} {...register(`methods.${i}.title`, { required: 'Name the method.' })} />
                )}
              </Field>
              <Field label="Cost (optional)">
                {(p) => <input {...p} inputMode="decimal" {...register(`methods.${i}.cost`)} />}
              </Field>
              <Field label="Free from (optional)">
                {(p) => <input {...p} inputMode="decimal" {...register(`methods.${i}.min_amount`)} />}
              </Field>
            </div>
            <button type="button" className="small danger" onClick={() => methods.remove(i)}>
              Remove method {i + 1}
            </button>
          </fieldset>
        ))}
        <div className="buttons">
          <button
            type="button"
            onClick={() =>
              methods.append({ method_id: 'flat_rate', title: 'Flat rate', cost: '', min_amount: '' })
            }
          >
            Add a method
          </button>
          <button type="submit" className="primary" disabled={isSubmitting}>
            Create shipping zone
          </button>
        </div>
      </form>
      <Notice>{zones.notice}</Notice>
      <WholeList
        what="Shipping zones"
        list={zones.list}
        columns={columns}
        rowKey={(z) => String(z.id)}
        empty="No shipping zones."
      />
      {zones.dialog}
    </Page>
  );
}
