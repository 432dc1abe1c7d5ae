import type { FieldError, UseFormRegisterReturn } from 'react-hook-form';
import { Field, wholeUpTo } from './form';

/** A price as the API takes it: up to nine whole digits and six decimals. */
export const PRICE = { value: /^\d{1,9}(\.\d{1,6})?$/, message: 'A price such as 49.00.' };

/** Sites per license: a whole number, 0 for unlimited, or empty for the default. */
export const SITES = { pattern: { value: /^\d*$/, message: 'A whole number of sites.' } };

/** One line of text under the product's name in the catalogue. */
export const SHORT_DESCRIPTION = { pattern: { value: /^[^\n\r]*$/, message: 'One line only.' } };

/** The rules of the trial's two fields (docs/selling.md, 'Trials'). */
export const TRIAL_DAYS = wholeUpTo(365, 'days');
export const TRIAL_SITES = { required: 'Enter how many sites, from 1 to 100.', ...wholeUpTo(100, 'sites') };

type Registered = { field: UseFormRegisterReturn; error?: FieldError | undefined };

/** A whole number typed in a number field, between `min` and `max` (the rules say which). */
export function NumberField({
  label,
  hint,
  field,
  error,
  min = 0,
  max,
}: Registered & { label: string; hint?: string; min?: number; max?: number }) {
  return (
    <Field label={label} hint={hint} error={error}>
      {(p) => <input {...p} type="number" min={min} max={max} inputMode="numeric" {...field} />}
    </Field>
  );
}

/** How many sites a license (or every license of a product) may be active on at once. */
export function SitesField(props: Registered & { label: string; hint: string }) {
  return <NumberField {...props} />;
}

/** The product's one-line description in the catalogue, on the new-product and product forms. */
export function ShortDescriptionField({ field, error }: Registered) {
  return (
    <Field
      label="Short description"
      hint="One line under the name in the store’s catalogue (at most 300 characters)."
      error={error}
    >
      {(p) => <input {...p} maxLength={300} {...field} />}
    </Field>
  );
}

/**
 * A product's trial, as the new-product form and the product's software configuration both ask
 * for it: its length in days (empty: no trial) and how many sites a trial license activates.
 */
export function TrialFields({
  days,
  sites,
  errors,
}: {
  days: UseFormRegisterReturn;
  sites: UseFormRegisterReturn;
  errors: { trial_days?: FieldError; trial_sites?: FieldError };
}) {
  const fields = [
    {
      label: 'Trial length (days)',
      hint: 'From 1 to 365; empty = no trial. A visitor can try the product without paying, once per email and site.',
      field: days,
      error: errors.trial_days,
    },
    {
      label: 'Trial sites',
      hint: 'How many sites a trial license activates, from 1 to 100.',
      field: sites,
      error: errors.trial_sites,
    },
  ];
  return (
    <div className="two">
      {fields.map((f) => (
        <Field key={f.field.name} label={f.label} hint={f.hint} error={f.error}>
          {(p) => <input {...p} type="text" inputMode="numeric" autoComplete="off" {...f.field} />}
        </Field>
      ))}
    </div>
  );
}
