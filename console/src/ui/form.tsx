import { type ComponentProps, type ReactNode, useId } from 'react';
import type { FieldError, FieldValues, Path, UseFormSetError } from 'react-hook-form';
import { ApiError } from '../api';

export interface ControlProps {
  id: string;
  'aria-invalid'?: true;
  'aria-describedby'?: string;
}

/**
 * A labelled form control with its hint and its error, tied together for screen readers: the
 * control gets the id, `aria-invalid` and `aria-describedby` from `children`'s argument. `id` is
 * for a control that must keep a known id (the sign-in form's `email` and `password`).
 */
export function Field({
  label,
  hint,
  error,
  id: fixedId,
  children,
}: {
  label: string;
  hint?: ReactNode;
  error?: FieldError | { message?: string };
  id?: string;
  children: (props: ControlProps) => ReactNode;
}) {
  const generatedId = useId();
  const id = fixedId ?? generatedId;
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const described = [hint ? hintId : '', error ? errorId : ''].filter(Boolean).join(' ');
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children({
        id,
        ...(error ? { 'aria-invalid': true as const } : {}),
        ...(described ? { 'aria-describedby': described } : {}),
      })}
      {hint ? (
        <p className="hint" id={hintId}>
          {hint}
        </p>
      ) : null}
      {error ? (
        <p className="field-error" id={errorId}>
          {error.message || 'This value is not accepted.'}
        </p>
      ) : null}
    </div>
  );
}

/**
 * A Field whose control is one `<input>`: every other property is the input's, the form's
 * `register(…)` included (spread in, as on an input).
 */
export function TextField({
  label,
  hint,
  error,
  id,
  ...input
}: {
  label: string;
  hint?: ReactNode;
  error?: FieldError | { message?: string };
  id?: string;
} & Omit<ComponentProps<'input'>, 'id'>) {
  return (
    <Field label={label} hint={hint} error={error} id={id}>
      {(p) => <input {...p} {...input} />}
    </Field>
  );
}

/** Choices of a select as `[value, words]` pairs: the words are shown, the value is sent. */
export type Choices = readonly (readonly [string, string])[];

/** A select's options, one per choice. */
export function Options({ choices }: { choices: Choices }) {
  return choices.map(([value, words]) => (
    <option key={value} value={value}>
      {words}
    </option>
  ));
}

/** A Field whose control is a select of `choices`: every other property is the select's, `register(…)` included. */
export function SelectField({
  label,
  hint,
  error,
  choices,
  ...select
}: {
  label: string;
  hint?: ReactNode;
  error?: FieldError | { message?: string };
  choices: Choices;
} & Omit<ComponentProps<'select'>, 'id'>) {
  return (
    <Field label={label} hint={hint} error={error}>
      {(p) => (
        <select {...p} {...select}>
          <Options choices={choices} />
        </select>
      )}
    </Field>
  );
}

/**
 * A refusal of the server shown at the fields it names: the envelope's `data.params` (schema
 * violations and the services' own refusals name each field, e.g. `{code: 'required'}`),
 * `data.field`, or a code that always concerns one field (`codes`, e.g. `coupon_exists` → `code`).
 * `fields` are the form's field names; `rename` maps the API's name to the form's where they
 * differ, and a nested name (`methods.0.cost`) falls back to its top field. The first field that
 * takes an error gets the focus and is scrolled to the middle of the screen, so a refusal at the
 * top of a long form is seen after pressing Save at its bottom. True when some field took one.
 */
export function showFieldErrors<T extends FieldValues>(
  error: unknown,
  setError: UseFormSetError<T>,
  fields: readonly string[],
  opts: { rename?: Record<string, string>; codes?: Record<string, string> } = {},
): boolean {
  if (!(error instanceof ApiError)) return false;
  const named: [string, string][] = [];
  const byCode = opts.codes?.[error.code];
  if (byCode) named.push([byCode, error.message]);
  if (typeof error.data.field === 'string') named.push([error.data.field, error.message]);
  for (const [name, why] of Object.entries(error.params)) named.push([name, String(why)]);
  let first: string | null = null;
  for (const [name, why] of named) {
    const field = [name, name.split('.')[0]!]
      .map((n) => opts.rename?.[n] ?? n)
      .find((n) => fields.includes(n));
    if (!field) continue;
    setError(field as Path<T>, { type: 'server', message: why }, { shouldFocus: first === null });
    first ??= field;
  }
  if (first === null) return false;
  const name = first;
  // After React has drawn the error under the field.
  requestAnimationFrame(() => {
    const control = document.querySelector<HTMLElement>(`[name="${CSS.escape(name)}"]`);
    if (!control) return;
    if (document.activeElement !== control) control.focus({ preventScroll: true });
    control.closest('.field')?.scrollIntoView({ block: 'center' }) ??
      control.scrollIntoView({ block: 'center' });
  });
  return true;
}

/** A whole number from 1 to `max`, or empty: the rules of a form field that holds one as text. */
export const wholeUpTo = (max: number, what: string) => ({
  pattern: { value: /^\d{1,3}$/, message: `A whole number of ${what}, from 1 to ${max}.` },
  validate: (v: string) => v === '' || (Number(v) >= 1 && Number(v) <= max) || `From 1 to ${max} ${what}.`,
});
