import { isGone, type NodeTier } from '@heddle/model';
import type { Liveness } from '@heddle/placement';
import type { NodeBook } from './node-book.js';
import type { StateStore, TargetRecord } from './state-store.js';

/** A node as `node ls` shows it. */
export interface NodeView {
  readonly node_id: string;
  readonly url: string;
  readonly public_key: string;
  readonly key_source: 'tofu' | 'pinned';
  /** The tier in force, or null while suspended (another key answered). */
  readonly tier: NodeTier | null;
  readonly assigned_tier: NodeTier;
  readonly pending_key: string | null;
  readonly liveness: Liveness;
  readonly routes: readonly string[];
  /** The software its last describe reported (`{name, version}`), or null. */
  readonly software: { readonly name: string; readonly version: string } | null;
  /** Capability ids of its held facts (runtimes of routes it does not advertise left out). */
  readonly capabilities: readonly string[];
  /** When its held facts expire (Unix ms), or null when none are held. */
  readonly facts_expire_at_ms: number | null;
  readonly last_seen_ms: number | null;
  readonly unreachable_since_ms: number | null;
  readonly last_error: string | null;
  /** Placements on it that are still there (not lost, rescheduled, revoked or unloaded). */
  readonly instances: number;
  /** Cordoned by the operator: no new places go there. */
  readonly cordoned: boolean;
  /** Operator labels (`room: kitchen`). */
  readonly labels: Readonly<Record<string, string>>;
  /**
   * Its clock offset as this controller last measured it (from a describe: docs/operator-guide.md,
   * "Clock skew"), or null when it was never measured in this process (or the host does not say).
   */
  readonly clock: NodeClockView | null;
}

/** A node's measured clock offset (`NodeView.clock`). */
export interface NodeClockView {
  /** Its clock minus this controller's (ms): positive when it is ahead. */
  readonly offset_ms: number;
  /** How far the true offset can be from `offset_ms` (half the round trip, ms). */
  readonly error_ms: number;
  /** When it was measured (Unix ms, the controller's clock). */
  readonly measured_at_ms: number;
  /** True when the node refused the describe as `expired` (its clock is outside the 30 s window). */
  readonly refused: boolean;
}

/** The view of `t`. */
export function nodeView(t: TargetRecord, book: NodeBook, store: StateStore, now: number): NodeView {
  const held = book.cache.get(t.node_id);
  const routes = new Set(t.routes);
  const meta = store.getNodeMeta(t.node_id);
  return {
    node_id: t.node_id,
    url: t.url,
    public_key: t.public_key,
    key_source: t.key_source,
    tier: t.tier,
    assigned_tier: t.assigned_tier,
    pending_key: t.pending_key,
    liveness: book.liveness.get(t.node_id, now),
    routes: [...t.routes],
    software: t.software ?? null,
    capabilities:
      held?.capabilities
        .map((c) => c.id)
        .filter((id) => !id.startsWith('runtime.') || routes.has(id.slice('runtime.'.length))) ?? [],
    facts_expire_at_ms: held?.expires_at_ms ?? null,
    last_seen_ms: t.last_seen_ms,
    unreachable_since_ms: t.unreachable_since_ms,
    last_error: t.last_error,
    instances: store.listPlacements(t.node_id).filter((p) => !isGone(p.state)).length,
    cordoned: meta?.cordoned ?? false,
    labels: { ...(meta?.labels ?? {}) },
    clock: clockView(book, t.node_id),
  };
}

function clockView(book: NodeBook, nodeId: string): NodeClockView | null {
  const r = book.clockOf(nodeId);
  if (r === undefined) return null;
  return {
    offset_ms: r.offset_ms,
    error_ms: r.error_ms,
    measured_at_ms: r.measured_at_ms,
    refused: r.refused,
  };
}
