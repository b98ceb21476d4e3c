import { tierRank } from '@heddle/model';
import type { Capability } from './capability.js';
import type { NodeInput, ViewNode } from './view.js';

const EMPTY_LABELS: Readonly<Record<string, string>> = Object.freeze({});

function attrInt(cap: Capability | undefined, attr: string): number | undefined {
  const v = cap?.attrs[attr];
  return typeof v === 'number' ? v : undefined;
}

/** A node of a view: the input plus what the engine derives once per view. */
export function deriveViewNode(input: NodeInput, index: number): ViewNode {
  const capById = new Map<string, Capability>();
  let accelMem = 0;
  let hasAccel = false;
  let cores = 1;
  for (const c of input.capabilities) {
    capById.set(c.id, c);
    if (c.id.startsWith('accel.')) {
      hasAccel = true;
      accelMem += attrInt(c, 'memory_mb') ?? 0;
    }
    if (c.id.startsWith('cpu.arch.')) cores = Math.max(cores, attrInt(c, 'cores') ?? 1);
  }
  return {
    index,
    node_id: input.node_id,
    tier: input.tier,
    tierRank: tierRank(input.tier),
    liveness: input.liveness,
    caps: input.capabilities,
    capById,
    expires_at_ms: input.expires_at_ms ?? Number.POSITIVE_INFINITY,
    labels: input.labels ?? EMPTY_LABELS,
    load_permille: input.load_permille ?? 0,
    cordoned: input.cordoned === true,
    memory_mb: attrInt(capById.get('mem.system'), 'size_mb') ?? -1,
    unified: capById.has('mem.unified'),
    accel_memory_mb: accelMem,
    has_accel: hasAccel,
    cpu_capacity: 100 * cores,
  };
}
