import type { Kysely } from 'kysely';

/**
 * What an order records of its tax (docs/taxes.md): the buyer's VAT number as given (normalised;
 * '' = none), `reverse_charge` (1 = a business buyer's valid VAT number of another member state,
 * no VAT charged), the country whose tax applied ('' = none), the tax per rate as charged
 * (JSON [{rate_id, name, rate, amount}], amounts in minor units: what the tax report adds up),
 * and the evidence of the buyer's location (JSON). Orders placed before keep the defaults: no
 * VAT number, no reverse charge, their tax in their items.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>): Promise<void> {
  const columns: [string, string, string | number][] = [
    ['buyer_tax_id', 'varchar(32)', ''],
    ['reverse_charge', 'integer', 0],
    ['tax_country', 'varchar(2)', ''],
    ['tax_lines', 'text', '[]'],
    ['tax_evidence', 'text', '{}'],
  ];
  // One statement a column: SQLite adds one column at a time.
  for (const [name, type, value] of columns) {
    await db.schema
      .alterTable('orders')
      // biome-ignore lint/suspicious/noExplicitAny: the column types above are literal SQL types
      .addColumn(name, type as any, (c) => c.notNull().defaultTo(value))
      .execute();
  }
}
