import { useFieldArray, useForm } from 'react-hook-form';
import { api, type Body, ok } from '../api';
import { inputLimits } from '../limits';
import type { ShippingZone } from '../resources';
import { EditButtons, useCollection, useEditing } from '../ui/collection';
import { ErrorNote, Notice, Page } from '../ui/feedback';
import { Field, SelectField, showFieldErrors, TextField } from '../ui/form';
import { editDeleteColumn, WholeList } from '../ui/list';
import { columnsFor } from '../ui/table';

/** The shipping methods the API offers (the form's select lists them). */
type Method = NonNullable<Body<'/v1/shipping-zones', 'post'>['methods']>[number]['method_id'];

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

/** A stored zone as the form's values (regions written back as `DE, US:CA`). */
const formOf = (z: ShippingZone): ZoneForm => ({
  name: z.name,
  regions: z.regions.map((r) => (r.state ? `${r.country}:${r.state}` : r.country)).join(', '),
  methods: z.methods.map((m) => ({
    method_id: m.method_id,
    title: m.title,
    cost: m.cost ?? '',
    min_amount: m.min_amount ?? '',
  })),
});

/**
 * Shipping zones (GET, POST, PATCH and DELETE /v1/shipping-zones): the whole list, in creation
 * order. **Edit** on a row loads the zone into the form, which then saves it with PATCH: its name,
 * and its regions and methods replaced whole, as the API takes them.
 */
export function ShippingZones() {
  const zones = useCollection('/shipping-zones', 'shipping zone', {
    list: () => ok(api.GET('/v1/shipping-zones')),
    create: (body: Body<'/v1/shipping-zones', 'post'>) => ok(api.POST('/v1/shipping-zones', { body })),
    update: (id, body: Body<'/v1/shipping-zones/{id}', 'patch'>) =>
      ok(api.PATCH('/v1/shipping-zones/{id}', { params: { path: { id } }, body })),
    remove: (id) => ok(api.DELETE('/v1/shipping-zones/{id}', { params: { path: { id } } })),
  });
  const {
    register,
    control,
    handleSubmit,
    reset,
    setError: setFieldError,
    formState: { errors, isSubmitting },
  } = useForm<ZoneForm>({ defaultValues: EMPTY });
  const { error, setError, editing, formRef, edit, stopEditing } = useEditing({
    reset,
    empty: EMPTY,
    formOf,
    setNotice: zones.setNotice,
  });
  const methods = useFieldArray({ control, name: 'methods' });

  const onSubmit = async (f: ZoneForm) => {
    setError(null);
    try {
      const save = editing
        ? (body: Body<'/v1/shipping-zones', 'post'>) => zones.update(editing.id, body)
        : zones.create;
      await save({
        name: f.name.trim(),
        regions: regionsOf(f.regions),
        methods: f.methods.map((m) => ({
          method_id: m.method_id as Method,
          title: m.title.trim(),
          ...(m.cost.trim() ? { cost: m.cost.trim() } : {}),
          ...(m.min_amount.trim() ? { min_amount: m.min_amount.trim() } : {}),
        })),
      });
      stopEditing();
    } catch (e) {
      showFieldErrors(e, setFieldError, ['name', 'regions']);
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
    editDeleteColumn(edit, remove),
  ];

  return (
    <Page title="Shipping zones">
      <form
        ref={formRef}
        onSubmit={handleSubmit(onSubmit)}
        noValidate
        className="card form"
        aria-labelledby="new-zone"
      >
        <h2 id="new-zone">{editing ? `Edit the shipping zone “${editing.name}”` : 'New shipping zone'}</h2>
        <ErrorNote error={error} />
        <div className="two">
          <TextField
            label="Name"
            error={errors.name}
            {...inputLimits('shippingZone', 'name')}
            {...register('name', { required: 'Name it.' })}
          />
          <TextField
            label="Regions"
            hint="Countries, commas between: DE, FR, US:CA (a state after a colon)."
            error={errors.regions}
            autoComplete="off"
            {...register('regions', { required: 'Name at least one country.' })}
          />
        </div>
        {methods.fields.map((m, i) => (
          <fieldset key={m.id}>
            <legend>Method {i + 1}</legend>
            <div className="two">
              <SelectField label="Kind" choices={METHODS} {...register(`methods.${i}.method_id`)} />
              <Field label="Title" error={errors.methods?.[i]?.title}>
                {(p) => (
                  <input {...p} {...register(`methods.${i}.title`, { required: 'Name the method.' })} />
                )}
              </Field>
              <TextField label="Cost (optional)" inputMode="decimal" {...register(`methods.${i}.cost`)} />
              <TextField
                label="Free from (optional)"
                inputMode="decimal"
                {...register(`methods.${i}.min_amount`)}
              />
            </div>
            <button type="button" className="small danger" onClick={() => methods.remove(i)}>
              Remove method {i + 1}
            </button>
          </fieldset>
        ))}
        <EditButtons
          what="shipping zone"
          editing={!!editing}
          isSubmitting={isSubmitting}
          onCancel={stopEditing}
        >
          <button
            type="button"
            onClick={() =>
              methods.append({ method_id: 'flat_rate', title: 'Flat rate', cost: '', min_amount: '' })
            }
          >
            Add a method
          </button>
        </EditButtons>
      </form>
      <Notice>{zones.notice}</Notice>
      <WholeList what="Shipping zones" of={zones} columns={columns} empty="No shipping zones." />
      {zones.dialog}
    </Page>
  );
}
