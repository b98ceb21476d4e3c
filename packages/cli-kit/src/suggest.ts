/**
 * The edit distance of `a` and `b` (Damerau-Levenshtein, optimal string alignment: insertions,
 * deletions, substitutions and swaps of two neighbours each cost 1).
 */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    const row: number[] = [i];
    for (let j = 1; j <= b.length; j++) row.push(i === 0 ? j : 0);
    rows.push(row);
  }
  const at = (i: number, j: number): number => rows[i]?.[j] ?? 0;
  for (let i = 1; i <= a.length; i++) {
    const row = rows[i] ?? [];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d = Math.min(d, at(i - 2, j - 2) + 1);
      row[j] = d;
    }
  }
  return at(a.length, b.length);
}

/**
 * The candidates `word` was probably meant to be, closest first: those within an edit distance of a
 * third of the word's length (at least 1, at most 3), and those the word is a prefix of (`pl` for
 * `place`). Case is ignored. Empty when nothing is close.
 */
export function suggestions(word: string, candidates: Iterable<string>): string[] {
  const w = word.toLowerCase();
  if (w.length === 0) return [];
  const limit = Math.min(3, Math.max(1, Math.floor(w.length / 3)));
  const scored: { c: string; d: number }[] = [];
  for (const c of new Set(candidates)) {
    const d = editDistance(w, c.toLowerCase());
    if (d <= limit) scored.push({ c, d });
    else if (w.length >= 2 && c.toLowerCase().startsWith(w)) scored.push({ c, d: limit + 1 });
  }
  return scored.sort((x, y) => x.d - y.d || x.c.localeCompare(y.c)).map((s) => s.c);
}

/**
 * The "did you mean" tail of an error line: `; did you mean "node"?` (or `"a" or "b"` when two are
 * equally close), or `''` when no candidate is close to `word`.
 */
export function didYouMean(word: string, candidates: Iterable<string>): string {
  const s = suggestions(word, candidates).slice(0, 2);
  const w = word.toLowerCase();
  // Only the closest: a second one that is further away is noise.
  const [first, second] = s;
  if (
    first !== undefined &&
    second !== undefined &&
    editDistance(w, second.toLowerCase()) > editDistance(w, first.toLowerCase())
  )
    s.pop();
  if (s.length === 0) return '';
  return `; did you mean ${s.map((c) => JSON.stringify(c)).join(' or ')}?`;
}
