import type { ConstraintFailure, Decision, ScoreParts } from './decision.js';
import type { ExecutionTier } from './vocabulary.js';

/** One row of an explanation: a node and what happened to it. */
export interface ExplainRow {
  /** Node id. */
  readonly node_id: string;
  /** `chosen`, `pinned` (chosen by pin), `candidate` (passed, scored lower), `rejected`. */
  readonly verdict: 'chosen' | 'pinned' | 'candidate' | 'rejected';
  /** Variant (chosen and candidates). */
  readonly variant?: string;
  /** Execution tier (chosen and candidates). */
  readonly execution?: ExecutionTier;
  /** Score (chosen and candidates). */
  readonly score?: number;
  /** Score parts (chosen and candidates). */
  readonly parts?: ScoreParts;
  /** Failed constraints (rejected). */
  readonly failures?: readonly ConstraintFailure[];
}

/** A decision explained: a one-line summary and the rows, chosen first, then candidates, then rejections. */
export interface Explanation {
  /** Workload. */
  readonly workload: string;
  /** Outcome. */
  readonly outcome: Decision['outcome'];
  /** Chosen (or pinned) node, if any. */
  readonly node_id?: string;
  /** The summary line. */
  readonly summary: string;
  /** Nodes evaluated / in the view, and whether the candidate set was bounded. */
  readonly nodes_evaluated: number;
  readonly nodes_total: number;
  readonly sampled: boolean;
  /** Rows. */
  readonly rows: readonly ExplainRow[];
}

const fmt = (n: number): string => (Number.isInteger(n) ? String(n) : n.toFixed(2));

function summaryOf(d: Decision): string {
  const scope = `${d.nodes_evaluated} of ${d.nodes_total} nodes evaluated${d.sampled ? ', candidate set bounded' : ''}`;
  const gov = d.governance_checked ? '' : ', governance not checked';
  switch (d.outcome) {
    case 'placed':
      return `${d.workload}: placed on ${d.node_id} (${d.variant}, ${d.execution}, score ${fmt(d.score)}${d.pinned ? ', pinned' : ''}; ${scope}${gov})`;
    case 'unplaceable':
      return `${d.workload}: unplaceable: ${d.reason} (${scope}${gov})`;
    case 'pin_refused':
      return `${d.workload}: ${d.error.message}`;
  }
}

/** The structured form of {@link explain} (what `explain(decision, 'json')` serialises). */
export function explainJson(d: Decision): Explanation {
  const rows: ExplainRow[] = [];
  const chosenId = d.outcome === 'placed' ? d.node_id : undefined;
  for (const c of d.candidates) {
    const verdict =
      c.node_id === chosenId ? (d.outcome === 'placed' && d.pinned ? 'pinned' : 'chosen') : 'candidate';
    rows.push({
      node_id: c.node_id,
      verdict,
      variant: c.variant,
      execution: c.execution,
      score: c.score,
      parts: c.parts,
    });
  }
  for (const r of d.rejected) rows.push({ node_id: r.node_id, verdict: 'rejected', failures: r.failures });
  return {
    workload: d.workload,
    outcome: d.outcome,
    ...(d.outcome === 'unplaceable' ? {} : { node_id: d.node_id }),
    summary: summaryOf(d),
    nodes_evaluated: d.nodes_evaluated,
    nodes_total: d.nodes_total,
    sampled: d.sampled,
    rows,
  };
}

function partsText(p: ScoreParts): string {
  return Object.entries(p)
    .filter(([, v]) => v !== 0)
    .map(([k, v]) => `${k}=${fmt(v)}`)
    .join(' ');
}

function failuresText(f: readonly ConstraintFailure[]): string {
  return f.map((x) => `${x.constraint}: ${x.detail}`).join('; ');
}

/**
 * Renders a decision for an operator: `table` (default) is a summary line and one row per node (node,
 * verdict, variant, score, then the score parts or the failed constraints); `json` is
 * {@link explainJson} as indented JSON.
 */
export function explain(d: Decision, format: 'table' | 'json' = 'table'): string {
  const x = explainJson(d);
  if (format === 'json') return JSON.stringify(x, null, 2);
  const head = ['NODE', 'VERDICT', 'VARIANT', 'SCORE', 'DETAIL'];
  const body = x.rows.map((r) => [
    r.node_id,
    r.verdict,
    r.variant === undefined ? '-' : `${r.variant} (${r.execution})`,
    r.score === undefined ? '-' : fmt(r.score),
    r.parts !== undefined ? partsText(r.parts) : failuresText(r.failures ?? []),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]!.length)));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  const counts = Object.entries(d.rejected_by_constraint)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  const lines = [x.summary, line(head), ...body.map(line)];
  if (counts !== '') lines.push(`rejections by constraint: ${counts}`);
  return `${lines.join('\n')}\n`;
}
