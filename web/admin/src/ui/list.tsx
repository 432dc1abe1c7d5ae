import { useId } from 'react';
import { ErrorNote, Loading } from './feedback';
import { type ColumnsOf, DataTable, Pager } from './table';

/** A filter of a list as a labelled choice; '' is “Any”. The choice goes to the address. */
export function FilterSelect({
  label,
  value,
  choices,
  onChange,
}: {
  label: string;
  value: string;
  choices: readonly (readonly [string, string])[];
  onChange: (value: string) => void;
}) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">Any</option>
        {choices.map(([v, words]) => (
          <option key={v} value={v}>
            {words}
          </option>
        ))}
      </select>
    </div>
  );
}

/** A labelled choice without “Any” (a list's sort and order); the choice goes to the address. */
export function ChoiceSelect({
  label,
  value,
  choices,
  onChange,
}: {
  label: string;
  value: string;
  choices: readonly (readonly [string, string])[];
  onChange: (value: string) => void;
}) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
        {choices.map(([v, words]) => (
          <option key={v} value={v}>
            {words}
          </option>
        ))}
      </select>
    </div>
  );
}

interface Loaded<D> {
  isPending: boolean;
  error: unknown;
  data?: D;
}

/**
 * A list the server paginates: its error, its loading line, its table and its pager. `total` is
 * null when the API sends no X-WP-Total (see Pager).
 */
export function PagedList<T extends object>({
  what,
  list,
  columns,
  rowKey,
  empty,
  page,
  perPage,
  set,
}: {
  what: string;
  list: Loaded<{ rows: T[]; total: number | null }>;
  columns: ColumnsOf<T>;
  rowKey: (row: T) => string;
  empty: string;
  page: number;
  perPage: number;
  set: (changes: Record<string, string | number | undefined>) => void;
}) {
  return (
    <>
      <ErrorNote error={list.error} />
      {list.isPending ? (
        <Loading what={what.toLowerCase()} />
      ) : list.data ? (
        <>
          <DataTable caption={what} columns={columns} data={list.data.rows} rowKey={rowKey} empty={empty} />
          <Pager
            label={what}
            page={page}
            perPage={perPage}
            total={list.data.total}
            shown={list.data.rows.length}
            onPage={(p) => set({ page: p })}
            onPerPage={(n) => set({ per_page: n, page: undefined })}
          />
        </>
      ) : null}
    </>
  );
}

/** A complete list (the API answers all of it at once), sortable in the browser. */
export function WholeList<T extends object>({
  what,
  list,
  columns,
  rowKey,
  empty,
}: {
  what: string;
  list: Loaded<T[]>;
  columns: ColumnsOf<T>;
  rowKey: (row: T) => string;
  empty: string;
}) {
  return (
    <>
      <ErrorNote error={list.error} />
      {list.isPending ? (
        <Loading what={what.toLowerCase()} />
      ) : list.data ? (
        <DataTable caption={what} columns={columns} data={list.data} rowKey={rowKey} sortable empty={empty} />
      ) : null}
    </>
  );
}

/** A row's button, named for its row to screen readers (“Delete VAT”, not six times “Delete”). */
export function RowButton({
  label,
  row,
  onClick,
  danger = false,
  disabled = false,
}: {
  label: string;
  row: string;
  onClick: () => void;
  danger?: boolean;
  disabled?: boolean;
}) {
  return (
    <button type="button" className={danger ? 'small danger' : 'small'} onClick={onClick} disabled={disabled}>
      {label}
      <span className="sr-only"> {row}</span>
    </button>
  );
}
