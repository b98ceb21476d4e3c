// Builders shared by the tests (not exported from the package).
import type { NodeTier } from '@heddle/model';
import type { Capability } from './capability.js';
import type { PlacementRequest } from './request.js';
import type { NodeInput } from './view.js';
import type { Liveness, Provenance } from './vocabulary.js';

/** A capability with defaults. */
export function cap(id: string, more: Partial<Capability> = {}): Capability {
  return { id, attrs: {}, provenance: 'probed', state: 'available', exclusive: false, ...more };
}

/** Options of {@link node}. */
export interface NodeOpts {
  arch?: string;
  tier?: NodeTier;
  liveness?: Liveness;
  memory?: number;
  cores?: number;
  extra?: Capability[];
  labels?: Record<string, string>;
  expires?: number;
  load?: number;
  cordoned?: boolean;
  native?: boolean;
  provenance?: Provenance;
}

/** A Linux node with a native runtime, `mem.system` and one architecture. */
export function node(id: string, o: NodeOpts = {}): NodeInput {
  const caps: Capability[] = [
    cap(`cpu.arch.${o.arch ?? 'aarch64'}`, {
      attrs: { cores: o.cores ?? 4 },
      provenance: o.provenance ?? 'probed',
    }),
    cap('os.linux'),
    cap('mem.system', { attrs: { size_mb: o.memory ?? 4096 } }),
  ];
  if (o.native !== false) caps.push(cap('runtime.native'));
  caps.push(...(o.extra ?? []));
  return {
    node_id: id,
    tier: o.tier ?? 'paired',
    liveness: o.liveness ?? 'alive',
    capabilities: caps,
    ...(o.expires === undefined ? {} : { expires_at_ms: o.expires }),
    ...(o.labels === undefined ? {} : { labels: o.labels }),
    ...(o.load === undefined ? {} : { load_permille: o.load }),
    ...(o.cordoned === undefined ? {} : { cordoned: o.cordoned }),
  };
}

/** A request for a native aarch64 workload. */
export function nativeRequest(more: Partial<PlacementRequest> = {}): PlacementRequest {
  return {
    workload: 'w',
    variants: [
      {
        name: 'aarch64-native',
        execution: 'native',
        requirements: [{ id: 'cpu.arch.aarch64' }, { id: 'os.linux' }, { id: 'runtime.native' }],
      },
    ],
    resources: { memory_mb: 256, cpu_pct: 50 },
    ...more,
  };
}
