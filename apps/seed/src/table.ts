/**
 * Renders rows as an aligned table: a header line, then one line per row; columns two spaces apart,
 * widths from the content, columns of numbers right-aligned, no trailing spaces.
 */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const cell = (row: readonly string[], i: number): string => row[i] ?? '';
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => cell(r, i).length)));
  const right = headers.map((_, i) => {
    const cells = rows.map((r) => cell(r, i)).filter((c) => c !== '' && c !== '-');
    return cells.length > 0 && cells.every((c) => /^-?\d+(\.\d+)?$/.test(c));
  });
  const line = (cells: readonly string[]): string =>
    headers
      .map((_, i) => {
        const t = cell(cells, i);
        const w = widths[i] ?? 0;
        return right[i] === true ? t.padStart(w) : t.padEnd(w);
      })
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)];
}

/** Renders pairs as aligned `key: value` lines. */
export function keyValues(pairs: readonly (readonly [string, string])[]): string[] {
  const width = Math.max(0, ...pairs.map(([k]) => k.length + 1));
  return pairs.map(([k, v]) => `${`${k}:`.padEnd(width)} ${v}`.trimEnd());
}
