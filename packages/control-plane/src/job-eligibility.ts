import { tierRank } from '@heddle/model';
import type { JobSpec } from './job-file.js';
import { nodeMeta } from './node-ops.js';
import type { PlaneContext } from './plane-context.js';

/** Whether a node may hold an instance of a job: null when it may, else why not (for people). */
export type NodeFit = string | null;

/**
 * Every known node and whether it may hold an instance of `spec` now (docs/jobs.md, "Eligible
 * nodes"): it must be alive, not cordoned, carry every label of `constraints.labels`, offer one of
 * `constraints.arch` (`cpu.arch.<arch>`) and one of `constraints.runtime` (`runtime.<route>`), and have
 * at least `constraints.tier`. What the package itself needs (a variant the node can run, memory) is
 * left to the engine, which explains it.
 */
export function jobNodeFits(ctx: PlaneContext, spec: JobSpec, now: number): Map<string, NodeFit> {
  const fits = new Map<string, NodeFit>();
  for (const t of ctx.store.listTargets()) fits.set(t.node_id, nodeFit(ctx, spec, t.node_id, now));
  return fits;
}

function nodeFit(ctx: PlaneContext, spec: JobSpec, nodeId: string, now: number): NodeFit {
  const liveness = ctx.book.liveness.get(nodeId, now);
  if (liveness !== 'alive') return `node is ${liveness}`;
  const meta = nodeMeta(ctx, nodeId);
  if (meta.cordoned) return 'node is cordoned';
  const c = spec.constraints;
  for (const [label, value] of Object.entries(c.labels ?? {})) {
    const has = meta.labels[label];
    if (has !== value)
      return has === undefined ? `node has no label ${label}` : `node label ${label} is ${has}, not ${value}`;
  }
  const node = ctx.view.node(nodeId, now);
  if (node === undefined) return 'node offers nothing (no verified facts)';
  if (c.tier !== undefined && node.tierRank < tierRank(c.tier))
    return `node tier ${node.tier} is below ${c.tier}`;
  const ids = node.caps.map((cap) => cap.id);
  if (c.arch !== undefined && !c.arch.some((a) => ids.includes(`cpu.arch.${a}`)))
    return `node arch is not one of ${c.arch.join(', ')}`;
  if (
    c.runtime !== undefined &&
    !c.runtime.some((r) => ids.some((id) => id === `runtime.${r}` || id.startsWith(`runtime.${r}.`)))
  )
    return `node offers none of the runtimes ${c.runtime.join(', ')}`;
  return null;
}

/** The nodes of `fits` that may not hold an instance, each with why (what the engine is told to leave out). */
export function unfitNodes(fits: ReadonlyMap<string, NodeFit>): Map<string, string> {
  const out = new Map<string, string>();
  for (const [id, why] of fits) if (why !== null) out.set(id, `job constraint: ${why}`);
  return out;
}
