import type { ConstraintFailure, Decision } from './decision.js';
import { candidate, common, countFailures, type Run, reservationFor } from './engine-run.js';
import { evaluateNode } from './evaluate.js';

/**
 * A pinned request: that node if it passes phase A (whatever its score), or `pin_refused` naming every
 * constraint it fails (`unknown_node` when the view does not hold it).
 */
export function placePinned(run: Run, pin: string): Decision {
  const { view, ctx, counts, prep } = run;
  const node = view.get(pin);
  if (node === undefined) {
    counts[0]!++;
    const failures: ConstraintFailure[] = [
      { constraint: 'unknown_node', detail: `no node ${pin} in the view` },
    ];
    return {
      ...common(run, 0, false, [], [{ node_id: pin, failures }]),
      outcome: 'pin_refused',
      node_id: pin,
      failures,
      error: {
        code: 'unknown_node',
        message: `pin to ${pin} refused: unknown_node (no such node in the view)`,
      },
    };
  }
  const failures: ConstraintFailure[] = [];
  const v = evaluateNode(ctx, node, failures);
  if (v < 0) {
    countFailures(counts, failures);
    const named = failureSummary(failures);
    return {
      ...common(run, 1, false, [], [{ node_id: node.node_id, failures }]),
      outcome: 'pin_refused',
      node_id: node.node_id,
      failures,
      error: { code: 'pin_ineligible', message: `pin to ${node.node_id} refused: ${named}` },
    };
  }
  const c = candidate(run.sctx, node, v);
  return {
    ...common(run, 1, false, [c], []),
    outcome: 'placed',
    node_id: node.node_id,
    variant: c.variant,
    execution: c.execution,
    score: c.score,
    pinned: true,
    reservation: reservationFor(run, node, prep.variants[v]!),
  };
}

/**
 * Failures named once per constraint, with every distinct detail of it:
 * `liveness (node is suspect); requirements (a: node has no capability x; b: ...)`.
 */
export function failureSummary(failures: readonly ConstraintFailure[]): string {
  const details = new Map<string, string[]>();
  for (const f of failures) {
    const held = details.get(f.constraint);
    if (held === undefined) details.set(f.constraint, [f.detail]);
    else if (!held.includes(f.detail)) held.push(f.detail);
  }
  return [...details].map(([c, d]) => `${c} (${d.join('; ')})`).join('; ');
}
