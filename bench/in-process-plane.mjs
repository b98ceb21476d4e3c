// What the library-level control-plane benchmarks share (control-plane-scale, pg-store): the
// controller's and the publisher's keys, the trust anchors, a permit-all policy, and a node driver
// answered in process (the host driver's place flow, `attemptPackage`, with no network), whose nodes
// each offer 8 cores and 64 GiB. Not a benchmark itself. Imports the built packages.
import { attemptPackage } from '@heddle/control-plane/driver';
import { keyPairFromSecret, toHex } from '@heddle/envelope';
import { parsePolicy } from '@heddle/gate';
import { deriveInstanceId } from '@heddle/model';
import { TrustAnchors } from '@heddle/package';

export const controller = keyPairFromSecret(new Uint8Array(32).fill(0x91));
export const publisher = keyPairFromSecret(new Uint8Array(32).fill(0x92));
export const anchors = new TrustAnchors([
  { id: 'p', role: 'publisher', publicKey: toHex(publisher.publicKey) },
]);
export const policy = parsePolicy({
  version: 1,
  name: 'bench',
  rules: [
    { id: 'all', effect: 'permit', actions: ['workload.place'], kinds: ['cog'], max_network: 'egress' },
  ],
});

/** Each simulated node: 8 cores and 64 GiB, so 10,000 of them hold well over 1M instances of 4 MB, 5%. */
export const CAPS = Object.freeze([
  { id: 'cpu.arch.x86_64', attrs: { cores: 8 }, provenance: 'claimed', state: 'available', exclusive: false },
  {
    id: 'mem.system',
    attrs: { size_mb: 65_536 },
    provenance: 'claimed',
    state: 'available',
    exclusive: false,
  },
  { id: 'runtime.wasi', attrs: {}, provenance: 'claimed', state: 'available', exclusive: false },
]);

/** A node driver answered in process: the host driver's place flow (`attemptPackage`) with no network. */
export class InProcessDriver {
  kind = 'sim';
  async add(ctx, url, options) {
    const now = ctx.now();
    const node_id = url.slice('sim://'.length);
    const t = {
      kind: 'sim',
      node_id,
      url,
      public_key: '',
      key_source: 'pinned',
      tier: options.tier,
      assigned_tier: options.tier,
      pending_key: null,
      routes: ['wasi'],
      facts: null,
      learned_at_ms: now,
      last_seen_ms: now,
      unreachable_since_ms: null,
      last_error: null,
    };
    ctx.store.putTarget(t);
    ctx.book.contact(node_id);
    return t;
  }
  viewNode(book, t, now) {
    return {
      node_id: t.node_id,
      tier: t.tier,
      liveness: book.liveness.get(t.node_id, now),
      capabilities: CAPS,
    };
  }
  async refresh(ctx, t) {
    ctx.book.contact(t.node_id);
    return t;
  }
  async verb() {
    return {};
  }
  placePackage(ctx, a) {
    return attemptPackage(ctx, a, async (s) => {
      const o = a.order;
      return {
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
        placed_at_ms: Date.now(),
        desired_running: o.start,
        life: o.start ? 'running' : 'loaded',
        lease_stopped: false,
        restarts: 0,
        adopted: false,
        state: o.start ? 'running' : 'loaded',
        status: {},
      };
    });
  }
  async settle(ctx, u) {
    ctx.store.removeUnsettled(u.decision_id);
    return 'nothing';
  }
}

export const nodeId = (i) => i.toString(16).padStart(32, '0');
