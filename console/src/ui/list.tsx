import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { type ReactElement, type ReactNode, useId, useState } from 'react';
import { ErrorNote, Loading } from './feedback';
import { type Choices, Options } from './form';
import { type ColumnsOf, columnsFor, DataTable, Pager } from './table';
import { positive, useUrlState } from './url';

/**
 * A labelled choice of a list; the choice goes to the address. With `any` (a filter), '' comes
 * first as “Any”; without it (a list's sort and order), `choices` are all there is.
 */
function Choice({
  label,
  value,
  choices,
  onChange,
  any,
}: {
  label: string;
  value: string;
  choices: Choices;
  onChange: (value: string) => void;
  any: boolean;
}) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
        {any ? <option value="">Any</option> : null}
        <Options choices={choices} />
      </select>
    </div>
  );
}

type ChoiceProps = Omit<Parameters<typeof Choice>[0], 'any'>;

/** A filter of a list as a labelled choice; '' is “Any”. */
export const FilterSelect = (props: ChoiceProps) => <Choice {...props} any />;

/** A labelled choice without “Any” (a list's sort and order). */
export const ChoiceSelect = (props: ChoiceProps) => <Choice {...props} any={false} />;

/** The values that are set: an empty filter is left out of the query (“any”). */
const setOnly = ({ page, per_page, ...values }: ListQuery): ListQuery => ({
  ...Object.fromEntries(Object.entries(values).filter(([, v]) => v !== '')),
  page,
  per_page,
});

/** A list's query: the filters from the address, as strings the API parses, and the page. */
export type ListQuery = Record<string, string | number> & { page: number; per_page: number };

type UrlSet = (changes: Record<string, string | number | undefined>) => void;

/**
 * A server-paginated list and its state in the address: the filters named (each '' when absent,
 * which the API reads as “any” or, for `sort` and `order`, as its default), the page and the page
 * size, which the API takes up to 100. The address's names are the API's, so `fetchPage` asks for
 * the list with them and `fixed` as its query (the filters that are set; the API checks them) and
 * reads the answer (`page` where the API sends X-WP-Total). `filter(name)` sets one filter and goes
 * back to the first page.
 */
export function useServerList<K extends string, T>({
  key,
  names,
  fetchPage,
  fixed = {},
  defaultPerPage = 25,
}: {
  key: readonly unknown[];
  names: readonly K[];
  fetchPage: (query: ListQuery) => Promise<{ rows: T[]; total: number | null }>;
  fixed?: Record<string, string>;
  defaultPerPage?: number;
}) {
  const [params, set] = useUrlState();
  const values = Object.fromEntries(names.map((n) => [n, params.get(n) ?? ''])) as Record<K, string>;
  const page = positive(params.get('page'), 1);
  const perPage = Math.min(100, positive(params.get('per_page'), defaultPerPage));
  const list = useQuery({
    queryKey: [...key, { ...values, page, perPage }],
    queryFn: () => fetchPage(setOnly({ ...fixed, ...values, page, per_page: perPage })),
    placeholderData: keepPreviousData,
  });
  return {
    ...values,
    page,
    perPage,
    set,
    filter: (name: K) => (value: string) => set({ [name]: value, page: undefined }),
    list,
  };
}

/**
 * A server-paginated list that is one section of a screen (a customer's orders, licenses and
 * subscriptions; a subscription's renewals): its page is kept in the section, not in the address,
 * so that the sections page on their own. `key` names the query (`[name, filters]`, the page added
 * to the filters); `fetchPage` asks the API for one page.
 */
export function useSectionList<T>(
  [name, filters]: readonly [string, Record<string, number>],
  enabled: boolean,
  fetchPage: (query: { page: number; per_page: number }) => Promise<{ rows: T[]; total: number | null }>,
  initialPerPage = 10,
) {
  const [page, setPage] = useState(1);
  const [perPage, setPerPage] = useState(initialPerPage);
  const set: UrlSet = (changes) => {
    if ('per_page' in changes) setPerPage(Number(changes.per_page) || initialPerPage);
    setPage(changes.page === undefined ? 1 : Number(changes.page));
  };
  const list = useQuery({
    queryKey: [name, { ...filters, page, perPage }],
    queryFn: () => fetchPage({ page, per_page: perPage }),
    enabled,
    placeholderData: keepPreviousData,
  });
  return { list, page, perPage, set };
}

const ORDERS = [
  ['', 'Default'],
  ['asc', 'Ascending'],
  ['desc', 'Descending'],
] as const;

/**
 * A list's header, from its `useListParams`: its search box (when the list has `search`: the
 * search runs on submit, from the first page), its filters (`children`) and, when `sorts` are
 * given, “Sort by” and “Order”.
 */
export function ListFilters({
  label,
  params: { search, sort = '', order = '', set },
  placeholder,
  searchMaxLength,
  sorts,
  children,
}: {
  label: string;
  params: { search?: string; sort?: string; order?: string; set: UrlSet };
  placeholder?: string;
  /** The longest search the API takes (its route's schema, console/src/limits.ts). */
  searchMaxLength?: number;
  sorts?: readonly (readonly [string, string])[];
  children?: ReactNode;
}) {
  const searchId = useId();
  return (
    <search aria-label={label}>
      <form
        className="filters"
        onSubmit={(e) => {
          e.preventDefault();
          if (search === undefined) return;
          set({
            search: String(new FormData(e.currentTarget).get('search') ?? '').trim(),
            page: undefined,
          });
        }}
      >
        {search === undefined ? null : (
          <div className="search-group">
            <div className="field">
              <label htmlFor={searchId}>Search</label>
              <input
                id={searchId}
                name="search"
                type="search"
                defaultValue={search}
                key={search}
                placeholder={placeholder}
                maxLength={searchMaxLength}
              />
            </div>
            <button type="submit">Search</button>
          </div>
        )}
        {children}
        {sorts ? (
          <>
            <ChoiceSelect
              label="Sort by"
              value={sort}
              choices={sorts}
              onChange={(v) => set({ sort: v, page: undefined })}
            />
            <ChoiceSelect
              label="Order"
              value={order}
              choices={ORDERS}
              onChange={(v) => set({ order: v, page: undefined })}
            />
          </>
        ) : null}
      </form>
    </search>
  );
}

interface Loaded<D> {
  isPending: boolean;
  error: unknown;
  data?: D;
}

/** What a list screen gives PagedList and WholeList: `of` holds where the list is loaded. */
interface ListProps<T extends object, Of> {
  what: string;
  of: Of;
  columns: ColumnsOf<T>;
  empty: string;
  /** A row's React key; by default its id (a row without one must name its key). */
  rowKey?: (row: T) => string;
}
type Keyed<T extends object> = { rowKey: (row: T) => string };
type Paged<T extends object> = {
  list: Loaded<{ rows: T[]; total: number | null }>;
  page: number;
  perPage: number;
  set: UrlSet;
};

/** The table of a list's rows. */
function tableOf<T extends object>(props: ListProps<T, unknown>, data: T[]) {
  const { what, columns, rowKey, empty } = props;
  return { caption: what, columns, data, rowKey: rowKey as Keyed<T>['rowKey'], empty };
}

/** A list's error and loading line, then what its data makes. */
function LoadedList<D>({
  what,
  list,
  children,
}: {
  what: string;
  list: Loaded<D>;
  children: (data: D) => ReactNode;
}) {
  return (
    <>
      <ErrorNote error={list.error} />
      {list.isPending ? <Loading what={what.toLowerCase()} /> : list.data ? children(list.data) : null}
    </>
  );
}

/**
 * A list the server paginates (`of`: a `useListParams`, or a screen's own paging): its table and
 * its pager. `total` is null when the API sends no X-WP-Total (see Pager).
 */
export function PagedList<T extends { id: number | string }>(props: ListProps<T, Paged<T>>): ReactElement;
export function PagedList<T extends object>(props: ListProps<T, Paged<T>> & Keyed<T>): ReactElement;
export function PagedList<T extends object>(props: ListProps<T, Paged<T>>) {
  const { list, page, perPage, set } = props.of;
  return (
    <LoadedList what={props.what} list={list}>
      {(data) => (
        <>
          <DataTable {...tableOf(props, data.rows)} />
          <Pager
            label={props.what}
            page={page}
            perPage={perPage}
            total={data.total}
            shown={data.rows.length}
            onPage={(p) => set({ page: p })}
            onPerPage={(n) => set({ per_page: n, page: undefined })}
          />
        </>
      )}
    </LoadedList>
  );
}

/** A PagedList as a section of a screen, under its heading (`what`); `id` ties the two. */
export function PagedSection<T extends { id: number | string }>({
  id,
  ...props
}: ListProps<T, Paged<T>> & { id: string }) {
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>{props.what}</h2>
      <PagedList {...props} />
    </section>
  );
}

/** A complete list (the API answers all of it at once; `of`: a query or a `useCrud`), sortable in the browser. */
export function WholeList<T extends { id: number | string }>(
  props: ListProps<T, { list: Loaded<T[]> }>,
): ReactElement;
export function WholeList<T extends object>(
  props: ListProps<T, { list: Loaded<T[]> }> & Keyed<T>,
): ReactElement;
export function WholeList<T extends object>(props: ListProps<T, { list: Loaded<T[]> }>) {
  return (
    <LoadedList what={props.what} list={props.of.list}>
      {(data) => <DataTable {...tableOf(props, data)} sortable />}
    </LoadedList>
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

/** The last column of a collection's table: each row's Edit and Delete, named for the row. */
export function editDeleteColumn<T extends { name: string }>(
  edit: (row: T) => void,
  remove: (row: T) => void,
) {
  return columnsFor<T>().display({
    id: 'actions',
    header: 'Actions',
    cell: (c) => (
      <span className="row-actions">
        <RowButton label="Edit" row={c.row.original.name} onClick={() => edit(c.row.original)} />
        <RowButton label="Delete" row={c.row.original.name} danger onClick={() => remove(c.row.original)} />
      </span>
    ),
  });
}
