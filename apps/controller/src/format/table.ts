import { visibleWidth } from './colour.js';

/** How a column aligns: `left` (text) or `right` (numbers). */
export type Align = 'left' | 'right';

/** A column of a {@link table}: its header and, optionally, its alignment. */
export interface Column {
  readonly header: string;
  /** Default: `right` when every non-empty cell of the column is a number, else `left`. */
  readonly align?: Align;
}

const NUMBER = /^-?\d+(\.\d+)?([a-zA-Z%]{0,3})?$/;

/** Whether a cell reads as a number (`12`, `3.5`, `12s`, `40%`): such columns align right. */
export function isNumeric(cell: string): boolean {
  return NUMBER.test(cell);
}

/**
 * Renders rows as an aligned table: a header line, then one line per row; columns two spaces apart,
 * widths from the content (colour codes take no width), numbers right-aligned, no trailing spaces.
 * Cells missing from a short row are empty.
 */
export function table(columns: readonly (Column | string)[], rows: readonly (readonly string[])[]): string[] {
  const cols = columns.map((c) => (typeof c === 'string' ? { header: c } : c));
  const cell = (row: readonly string[], i: number): string => row[i] ?? '';
  const widths = cols.map((c, i) =>
    Math.max(visibleWidth(c.header), ...rows.map((r) => visibleWidth(cell(r, i)))),
  );
  const aligns: Align[] = cols.map((c, i) => {
    if (c.align !== undefined) return c.align;
    const cells = rows.map((r) => cell(r, i)).filter((x) => x !== '' && x !== '-');
    return cells.length > 0 && cells.every((x) => isNumeric(x)) ? 'right' : 'left';
  });
  const line = (cells: readonly string[]): string =>
    cols
      .map((_, i) => {
        const text = cell(cells, i);
        const pad = ' '.repeat(Math.max(0, (widths[i] ?? 0) - visibleWidth(text)));
        return aligns[i] === 'right' ? pad + text : text + pad;
      })
      .join('  ')
      .trimEnd();
  return [line(cols.map((c) => c.header)), ...rows.map(line)];
}

/**
 * Renders pairs as aligned `key: value` lines (keys padded to the widest), for one object's fields.
 */
export function keyValues(pairs: readonly (readonly [string, string])[]): string[] {
  const width = Math.max(0, ...pairs.map(([k]) => visibleWidth(k) + 1));
  return pairs.map(([k, v]) => `${`${k}:`.padEnd(width)} ${v}`.trimEnd());
}
