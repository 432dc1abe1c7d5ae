import {
  type ImportKind,
  type ImportProblem,
  type ImportRecord,
  type ImportSource,
  type ImportTotals,
  readKind,
} from '../../src/modules/imports/records.js';

/** An old store's records as the readers yield them, given in the test: the writer's input. */
export type Records = { [K in ImportKind]?: (ImportRecord<K> | ImportProblem)[] };

/**
 * A source over `records`, whose totals are what the source says it holds (by default its rows,
 * and the completed orders' totals as revenue), for testing the writer without a store's database.
 */
export function recordsSource(
  name: string,
  records: Records,
  totals: Partial<ImportTotals> = {},
): ImportSource {
  const rows = (kind: ImportKind) => records[kind]?.length ?? 0;
  const revenue: Record<string, number> = {};
  for (const o of records.orders ?? []) {
    if ('total' in o && o.status === 'completed') revenue[o.currency] = (revenue[o.currency] ?? 0) + o.total;
  }
  return {
    name,
    read: <K extends ImportKind>(kind: K) =>
      readKind<K>(
        Object.fromEntries(
          Object.entries(records).map(([k, list]) => [k, () => list as (ImportRecord<K> | ImportProblem)[]]),
        ),
        kind,
      ),
    totals: async () => ({
      customers: rows('customers'),
      licenses: rows('licenses'),
      activations: rows('activations'),
      orders: rows('orders'),
      subscriptions: rows('subscriptions'),
      revenue,
      ...totals,
    }),
    close: async () => {},
  };
}
