import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type ReactNode, useRef, useState } from 'react';
import { useConfirm } from './confirm';

/** The typed calls of a collection's routes (GET and POST on the list, PATCH and DELETE on one). */
export interface CollectionCalls<T, C, U> {
  list: () => Promise<T[]>;
  create: (body: C) => Promise<T>;
  update: (id: number, body: U) => Promise<T>;
  remove: (id: number) => Promise<unknown>;
}

/**
 * A resource the API lists whole (tax rates, shipping zones): its list, `create` and `update`
 * (`PATCH`; a refusal is the caller's to place on its fields) and `remove` after a confirmation,
 * with the screen's notice. `key` is its query key.
 */
export function useCollection<T extends { id: number; name: string }, C, U>(
  key: string,
  what: string,
  calls: CollectionCalls<T, C, U>,
) {
  const client = useQueryClient();
  const confirm = useConfirm();
  const [notice, setNotice] = useState('');
  const list = useQuery({ queryKey: [key], queryFn: calls.list });

  const create = async (body: C) => {
    setNotice('');
    const created = await calls.create(body);
    setNotice(`“${created.name}” is created.`);
    await client.invalidateQueries({ queryKey: [key] });
    return created;
  };
  const update = async (id: number, body: U) => {
    setNotice('');
    const updated = await calls.update(id, body);
    setNotice(`“${updated.name}” is saved.`);
    await client.invalidateQueries({ queryKey: [key] });
    return updated;
  };
  const remove = (row: T, consequence: ReactNode) =>
    confirm.ask({
      title: `Delete the ${what} “${row.name}”?`,
      body: <p>{consequence} This cannot be undone.</p>,
      confirmLabel: `Delete ${what}`,
      danger: true,
      action: async () => {
        await calls.remove(row.id);
        setNotice(`“${row.name}” is deleted.`);
        await client.invalidateQueries({ queryKey: [key] });
      },
    });
  return { list, create, update, remove, notice, setNotice, dialog: confirm.dialog };
}

/**
 * The form beside a collection's list, which creates one or, after a row's **Edit**, saves that
 * row: what it edits, its refusal, and the form element, which Edit scrolls to and focuses.
 * `reset` is the form's (react-hook-form), `empty` its values for a new one, `formOf` a row's.
 */
export function useEditing<T, F>({
  reset,
  empty,
  formOf,
  setNotice,
}: {
  reset: (values: F) => void;
  empty: F;
  formOf: (row: T) => F;
  setNotice: (notice: string) => void;
}) {
  const [error, setError] = useState<unknown>(null);
  const [editing, setEditing] = useState<T | null>(null);
  const formRef = useRef<HTMLFormElement>(null);
  const edit = (row: T) => {
    setError(null);
    setNotice('');
    setEditing(row);
    reset(formOf(row));
    formRef.current?.scrollIntoView({ block: 'start' });
    formRef.current?.querySelector('input')?.focus();
  };
  /** After a save, and on “Cancel editing”: the form is a new one again. */
  const stopEditing = () => {
    setError(null);
    setEditing(null);
    reset(empty);
  };
  return { error, setError, editing, formRef, edit, stopEditing };
}

/** The form's buttons: `children` first, “Cancel editing” while editing, then Create or Save. */
export function EditButtons({
  what,
  editing,
  isSubmitting,
  onCancel,
  children,
}: {
  what: string;
  editing: boolean;
  isSubmitting: boolean;
  onCancel: () => void;
  children?: ReactNode;
}) {
  return (
    <div className="buttons">
      {children}
      {editing ? (
        <button type="button" onClick={onCancel}>
          Cancel editing
        </button>
      ) : null}
      <button type="submit" className="primary" disabled={isSubmitting}>
        {editing ? `Save ${what}` : `Create ${what}`}
      </button>
    </div>
  );
}
