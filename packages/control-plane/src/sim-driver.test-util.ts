// A node driver answered in this process (no network), for tests of the place path at scale: the host
// driver's place flow (`attemptPackage`) with a transport that answers as a host would, with the
// instance id the host derives. Its nodes offer `runtime.wasi`, `cores` cores and `memoryMb` MB.
import type { NodeTier } from '@heddle/model';
import { deriveInstanceId } from '@heddle/model';
import type { NodeInput } from '@heddle/placement';
import type { InstanceView } from '@heddle/protocol';
import type { NodeDriver } from './node-driver.js';
import { attemptPackage } from './place-attempt.js';
import type { TargetRecord } from './state-store.js';

/** The in-process driver of kind `sim`; a node is added at `sim://<node id>` with `{tier}`. */
export function simDriver(memoryMb: number, cores = 8): NodeDriver {
  const caps = [
    { id: 'cpu.arch.x86_64', attrs: { cores }, provenance: 'claimed', state: 'available', exclusive: false },
    {
      id: 'mem.system',
      attrs: { size_mb: memoryMb },
      provenance: 'claimed',
      state: 'available',
      exclusive: false,
    },
    { id: 'runtime.wasi', attrs: {}, provenance: 'claimed', state: 'available', exclusive: false },
  ] as const;
  return {
    kind: 'sim',
    add: async (ctx, url, options) => {
      const tier = (options as { tier: NodeTier }).tier; // cast: tests pass {tier}
      const now = ctx.now();
      const t: TargetRecord = {
        kind: 'sim',
        node_id: url.slice('sim://'.length),
        url,
        public_key: '',
        key_source: 'pinned',
        tier,
        assigned_tier: tier,
        pending_key: null,
        routes: ['wasi'],
        facts: null,
        learned_at_ms: now,
        last_seen_ms: now,
        unreachable_since_ms: null,
        last_error: null,
      };
      ctx.store.putTarget(t);
      ctx.book.contact(t.node_id);
      return t;
    },
    viewNode: (book, t, now): NodeInput => ({
      node_id: t.node_id,
      tier: t.tier ?? 'discovered',
      liveness: book.liveness.get(t.node_id, now),
      capabilities: caps.map((c) => ({ ...c, attrs: { ...c.attrs } })),
    }),
    refresh: async (_ctx, t) => t,
    verb: async () => ({}),
    settle: async (ctx, u) => {
      ctx.store.removeUnsettled(u.decision_id);
      return 'nothing';
    },
    placePackage: (ctx, a) =>
      attemptPackage(ctx, a, async (s) => {
        const o = a.order;
        const view: InstanceView = {
          instance_id: deriveInstanceId(o.workload, o.package_id, o.values, o.mode, s.target.node_id),
          workload: o.workload,
          version: o.version,
          route: 'wasi',
          runtime: 'wasi',
          variant: s.body.variant,
          package_id: o.package_id,
          manifest_hash: o.manifest_hash,
          mode: o.mode,
          decision_id: s.decisionId,
          last_decision_id: s.decisionId,
          requester: ctx.nodeId,
          placed_at_ms: ctx.now(),
          desired_running: o.start,
          life: o.start ? 'running' : 'loaded',
          lease_stopped: false,
          restarts: 0,
          adopted: false,
          state: o.start ? 'running' : 'loaded',
          // cast: a host's full status is not needed by the place path (it records state and ids)
          status: {} as InstanceView['status'],
        };
        return view;
      }),
  };
}

/** The node id of the `i`th simulated node. */
export const simNodeId = (i: number): string => `5${i.toString(16).padStart(31, '0')}`;
