/**
 * RFC 4180 CSV: fields separated by commas, a field in double quotes may hold commas, line breaks
 * and doubled quotes; lines end in LF or CRLF; a UTF-8 byte order mark is skipped. Yields one row
 * (its fields) at a time from chunks of text, so a file of any size is read in bounded memory.
 */
export async function* parseCsv(chunks: AsyncIterable<string>): AsyncGenerator<string[]> {
  let field = '';
  let row: string[] = [];
  let quoted = false;
  /** In a quoted field, a quote was just read: a second one is a literal quote, anything else closes it. */
  let quoteSeen = false;
  let first = true;
  let any = false;
  for await (let chunk of chunks) {
    if (first) {
      if (chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1);
      first = false;
    }
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i]!;
      if (quoted) {
        if (quoteSeen) {
          quoteSeen = false;
          if (c === '"') {
            field += '"';
            continue;
          }
          quoted = false;
          // falls through to the unquoted handling of this character
        } else if (c === '"') {
          quoteSeen = true;
          continue;
        } else {
          field += c;
          continue;
        }
      }
      any = true;
      if (c === '"' && field === '') quoted = true;
      else if (c === ',') {
        row.push(field);
        field = '';
      } else if (c === '\n') {
        row.push(field.endsWith('\r') ? field.slice(0, -1) : field);
        yield row;
        row = [];
        field = '';
        any = false;
      } else field += c;
    }
  }
  if (quoted && !quoteSeen) throw new CsvError('a quoted field is not closed');
  if (any || field !== '' || row.length > 0) {
    row.push(field.endsWith('\r') ? field.slice(0, -1) : field);
    yield row;
  }
}

export class CsvError extends Error {}

/** Rows as objects keyed by the header row's names; blank lines are skipped. */
export async function* csvRecords(
  chunks: AsyncIterable<string>,
): AsyncGenerator<{ line: number; values: Record<string, string> }> {
  let header: string[] | null = null;
  let line = 0;
  for await (const row of parseCsv(chunks)) {
    line++;
    if (row.length === 1 && row[0] === '') continue;
    if (!header) {
      header = row.map((h) => h.trim());
      continue;
    }
    const values: Record<string, string> = {};
    header.forEach((name, i) => {
      values[name] = row[i] ?? '';
    });
    yield { line, values };
  }
}
