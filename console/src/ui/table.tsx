import {
  type ColumnDef,
  createColumnHelper,
  createSortedRowModel,
  flexRender,
  rowSortingFeature,
  sortFn_alphanumeric,
  sortFn_basic,
  sortFn_datetime,
  sortFn_text,
  tableFeatures,
  useTable,
} from '@tanstack/react-table';
import type { ReactElement } from 'react';

/** The one feature set of the console's tables (TanStack Table 9 registers features explicitly). */
export const features = tableFeatures({
  rowSortingFeature,
  sortedRowModel: createSortedRowModel(),
  sortFns: {
    alphanumeric: sortFn_alphanumeric,
    basic: sortFn_basic,
    datetime: sortFn_datetime,
    text: sortFn_text,
  },
});

export const columnsFor = <T extends object>() => createColumnHelper<typeof features, T>();

// biome-ignore lint/suspicious/noExplicitAny: each column has its own value type, as TanStack's examples type them
export type ColumnsOf<T extends object> = ColumnDef<typeof features, T, any>[];

/**
 * A table on TanStack Table. `sortable` sorts in the browser, and is only offered for complete
 * lists (a license's activations, a product's releases): a server-paginated list can only be
 * sorted by the server (the Licenses list asks it with `sort` and `order`, docs/admin.md).
 */
interface TableProps<T extends object> {
  caption: string;
  columns: ColumnsOf<T>;
  data: T[];
  sortable?: boolean;
  empty: string;
  rowKey?: (row: T) => string;
}

/** A row's React key: its id, unless the table names another (rows without an id must). */
export function DataTable<T extends { id: number | string }>(props: TableProps<T>): ReactElement;
export function DataTable<T extends object>(
  props: TableProps<T> & { rowKey: (row: T) => string },
): ReactElement;
export function DataTable<T extends object>({
  caption,
  columns,
  data,
  sortable = false,
  empty,
  rowKey = (row) => String((row as { id: number | string }).id),
}: TableProps<T>) {
  const table = useTable({
    features,
    columns,
    data,
    enableSorting: sortable,
    getRowId: rowKey,
  });
  return (
    // Wide screens: a table that may scroll sideways inside its frame (reachable and scrollable by
    // keyboard). Narrow screens: each row a card, each cell labelled by its column (styles.css);
    // the explicit roles keep the table's meaning for screen readers when CSS changes its display.
    <section
      className={`table-wrap${sortable ? ' sortable' : ''}`}
      // biome-ignore lint/a11y/noNoninteractiveTabindex: a region that scrolls must be focusable to be scrolled by keyboard
      tabIndex={0}
      aria-label={caption}
    >
      {/* biome-ignore lint/a11y/noRedundantRoles: kept on purpose, see above */}
      <table role="table">
        <caption className="sr-only">{caption}</caption>
        {/* biome-ignore lint/a11y/noRedundantRoles: kept on purpose, see above */}
        <thead role="rowgroup">
          {table.getHeaderGroups().map((group) => (
            // biome-ignore lint/a11y/noRedundantRoles: kept on purpose, see above
            <tr key={group.id} role="row">
              {group.headers.map((header) => {
                const sorted = header.column.getIsSorted();
                const label = flexRender(header.column.columnDef.header, header.getContext());
                return (
                  <th
                    key={header.id}
                    scope="col"
                    // biome-ignore lint/a11y/noRedundantRoles: kept on purpose, see above
                    role="columnheader"
                    aria-sort={sorted === 'asc' ? 'ascending' : sorted === 'desc' ? 'descending' : undefined}
                  >
                    {header.column.getCanSort() ? (
                      <button
                        type="button"
                        className="sort"
                        onClick={header.column.getToggleSortingHandler()}
                      >
                        {label}
                        <span aria-hidden="true">
                          {sorted === 'asc' ? ' ▲' : sorted === 'desc' ? ' ▼' : ' ↕'}
                        </span>
                      </button>
                    ) : (
                      label
                    )}
                  </th>
                );
              })}
            </tr>
          ))}
        </thead>
        {/* biome-ignore lint/a11y/noRedundantRoles: kept on purpose, see above */}
        <tbody role="rowgroup">
          {table.getRowModel().rows.length === 0 ? (
            // biome-ignore lint/a11y/noRedundantRoles: kept on purpose, see above
            <tr role="row">
              {/* biome-ignore lint/a11y/noRedundantRoles: kept on purpose, see above */}
              <td colSpan={columns.length} className="empty" role="cell">
                {empty}
              </td>
            </tr>
          ) : (
            table.getRowModel().rows.map((row) => (
              // biome-ignore lint/a11y/noRedundantRoles: kept on purpose, see above
              <tr key={row.id} role="row">
                {row.getAllCells().map((cell) => {
                  const header = cell.column.columnDef.header;
                  return (
                    // biome-ignore lint/a11y/noRedundantRoles: kept on purpose, see above
                    <td key={cell.id} role="cell" data-label={typeof header === 'string' ? header : ''}>
                      {/* One box per cell, beside its column's name on a narrow screen. */}
                      <div>{flexRender(cell.column.columnDef.cell, cell.getContext())}</div>
                    </td>
                  );
                })}
              </tr>
            ))
          )}
        </tbody>
      </table>
    </section>
  );
}

/**
 * Server pagination: where we are, and the way to the neighbouring pages. `total` is null for a
 * list whose API sends no X-WP-Total (orders): then a full page is the only sign of a next one.
 */
export function Pager({
  page,
  perPage,
  total,
  shown,
  onPage,
  onPerPage,
  label,
}: {
  page: number;
  perPage: number;
  total: number | null;
  /** Rows on this page, for a list without a total. */
  shown?: number;
  onPage: (page: number) => void;
  onPerPage: (perPage: number) => void;
  label: string;
}) {
  const count = total ?? (page - 1) * perPage + (shown ?? 0);
  const pages = total === null ? null : Math.max(1, Math.ceil(total / perPage));
  const first = count === 0 || (total === null && !shown) ? 0 : (page - 1) * perPage + 1;
  const last = Math.min(count, page * perPage);
  const hasNext = pages === null ? (shown ?? 0) >= perPage : page < pages;
  return (
    <nav className="pager" aria-label={`${label} pages`}>
      <span>
        {first}–{last}
        {total === null ? '' : ` of ${total}`}
      </span>
      <button type="button" onClick={() => onPage(page - 1)} disabled={page <= 1}>
        Previous<span className="sr-only"> page</span>
      </button>
      <span>{pages === null ? `Page ${page}` : `Page ${page} of ${pages}`}</span>
      <button type="button" onClick={() => onPage(page + 1)} disabled={!hasNext}>
        Next<span className="sr-only"> page</span>
      </button>
      <label>
        Per page{' '}
        <select value={perPage} onChange={(e) => onPerPage(Number(e.target.value))}>
          {[10, 25, 50, 100].map((n) => (
            <option key={n} value={n}>
              {n}
            </option>
          ))}
        </select>
      </label>
    </nav>
  );
}
