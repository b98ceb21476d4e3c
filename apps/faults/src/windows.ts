// Proof that a fault landed inside the window its trial claims (issue 15 item 16). A trial that kills a
// daemon "during a place" must show, from the daemons' own records, that the place had started and
// had not finished when the kill came; a trial that cannot show it did not run (it is counted as not
// run, and the suite fails when too many of a group's trials did not land).
import { closeSync, openSync, readSync, statSync } from 'node:fs';

/** One chain record as read from a chain file. */
export interface ChainRecord {
  /** The record's hash (for a controller decision: the decision id). */
  readonly hash: string;
  readonly source: string;
  readonly kind: string;
  readonly payload: Readonly<Record<string, unknown>>;
}

/**
 * Reads the chain file at `path` from byte `offset`: the complete records appended since (a torn
 * last line is left for the next read) and the offset to read from next time.
 */
export function chainSince(path: string, offset: number): { records: ChainRecord[]; offset: number } {
  let size: number;
  try {
    size = statSync(path).size;
  } catch {
    return { records: [], offset };
  }
  if (size <= offset) return { records: [], offset: Math.min(offset, size) };
  const buf = Buffer.alloc(size - offset);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, buf, 0, buf.length, offset);
  } finally {
    closeSync(fd);
  }
  const end = buf.lastIndexOf(0x0a);
  if (end < 0) return { records: [], offset };
  const records: ChainRecord[] = [];
  for (const line of buf.subarray(0, end).toString('utf8').split('\n')) {
    if (line.trim() === '') continue;
    try {
      // cast: every field is typed unknown and checked before use.
      const e = JSON.parse(line) as { hash?: unknown; source?: unknown; kind?: unknown; payload?: unknown };
      if (typeof e.kind !== 'string' || typeof e.payload !== 'object' || e.payload === null) continue;
      records.push({
        hash: typeof e.hash === 'string' ? e.hash : '',
        source: typeof e.source === 'string' ? e.source : '',
        kind: e.kind,
        // cast: checked just above to be a non-null object (a JSON object's keys are strings).
        payload: e.payload as Record<string, unknown>,
      });
    } catch {
      // a line that is not a record: the chain verification judges the file
    }
  }
  return { records, offset: offset + end + 1 };
}

/** The size of the file at `path` now (0 when it does not exist): where {@link chainSince} starts. */
export function chainEnd(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** Polls `check` every `everyMs` until it returns a value, or `timeoutMs` passes (then undefined). */
export async function watch<T>(
  timeoutMs: number,
  everyMs: number,
  check: () => T | undefined | Promise<T | undefined>,
): Promise<T | undefined> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await Promise.resolve()
      .then(check)
      .catch(() => undefined);
    if (v !== undefined || Date.now() > until) return v;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** The controller's decision records (`workload.place`, phase `decision`) among `records`. */
export function decisions(records: readonly ChainRecord[]): ChainRecord[] {
  return records.filter((r) => r.kind === 'workload.place' && r.payload.phase === 'decision');
}

/**
 * Whether the controller had recorded the answer of the place of decision `decisionId` (its chain
 * holds an `attempt` of that decision that placed it, a reconciliation that found it placed, or the
 * decision left `unsettled`: the place had returned, its answer lost).
 */
export function controllerRecordedPlace(records: readonly ChainRecord[], decisionId: string): boolean {
  return records.some(
    (r) =>
      r.kind === 'workload.place' &&
      r.payload.decision_id === decisionId &&
      ((r.payload.phase === 'attempt' && r.payload.outcome === 'placed') ||
        (r.payload.phase === 'reconciled' && r.payload.outcome === 'placed') ||
        r.payload.phase === 'unsettled'),
  );
}

/**
 * Whether a host had finished the place of decision `decisionId`: its `workload.place` record of it,
 * or a `workload.refuse` of a place under that decision (a refused place is over too).
 */
export function hostFinishedPlace(records: readonly ChainRecord[], decisionId: string): boolean {
  return records.some(
    (r) =>
      r.payload.decision_id === decisionId &&
      ((r.kind === 'workload.place' &&
        (r.payload.phase === 'placed' || r.payload.phase === 'already_placed')) ||
        (r.kind === 'workload.refuse' &&
          (r.payload.method === 'workload.place' || r.payload.method === 'workload.load'))),
  );
}

/** What a trial result says of its window (see `TrialResult`). */
export interface WindowOutcome {
  readonly group: string;
  readonly seed: number;
  /** null: the trial claims no window. */
  readonly landed: boolean | null;
}

/**
 * The groups whose trials too often missed the window they claim: with two or more trials of a group
 * in the run, fewer than half of them landed (a single trial, a rerun, is not judged). One line each.
 */
export function windowShortfalls(results: readonly WindowOutcome[]): string[] {
  const byGroup = new Map<string, { landed: number; missed: number[] }>();
  for (const r of results) {
    if (r.landed === null) continue;
    const g = byGroup.get(r.group) ?? { landed: 0, missed: [] };
    if (r.landed) g.landed++;
    else g.missed.push(r.seed);
    byGroup.set(r.group, g);
  }
  const out: string[] = [];
  for (const [group, g] of byGroup) {
    const n = g.landed + g.missed.length;
    if (n >= 2 && g.landed * 2 < n)
      out.push(
        `${group}: only ${g.landed} of ${n} trials landed their fault inside the window they claim (missed: seeds ${g.missed.join(', ')})`,
      );
  }
  return out;
}
