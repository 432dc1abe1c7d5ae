import { type ReactNode, useId } from 'react';
import type { FieldError } from 'react-hook-form';

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
