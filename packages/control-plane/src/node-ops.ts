import { errorMessage } from '@heddle/envelope';
import { isGone } from '@heddle/model';
import { raiseAlert } from './alerts.js';
import { PlaneError } from './errors.js';
import { stopInstance, unloadInstance } from './instance-verbs.js';
import { LabelName, LabelValue } from './order.js';
import { placeStoredOrder } from './place.js';
import { PLANE_CHAIN_SOURCE, type PlaneContext } from './plane-context.js';
import type { AlertReason, NodeMetaRecord, PlacementRecord } from './state-store.js';

/** The chain kind of the operator's changes to a node (cordon, uncordon, labels, drain). */
export const NODE_KIND = 'workload.node';

/** Most labels on one node. */
export const MAX_NODE_LABELS = 64;

/** A change of a node's labels: values to set, names to remove. */
export interface LabelChange {
  readonly set?: Readonly<Record<string, string>> | undefined;
  readonly remove?: readonly string[] | undefined;
}

/** The operator's settings of a node (defaults: not cordoned, no labels). */
export function nodeMeta(ctx: PlaneContext, nodeId: string): NodeMetaRecord {
  return ctx.store.getNodeMeta(nodeId) ?? { node_id: nodeId, cordoned: false, labels: {}, updated_at_ms: 0 };
}

/**
 * Cordons (or uncordons) a known node (`unknown_node` otherwise): stored, then chained (`workload.node`,
 * phase `cordon` or `uncordon`). A cordoned node takes no new places: the engine rejects it with the
 * constraint `cordoned`. What runs there keeps running.
 */
export async function setCordon(
  ctx: PlaneContext,
  nodeId: string,
  cordoned: boolean,
): Promise<NodeMetaRecord> {
  ctx.book.get(nodeId);
  const next = { ...nodeMeta(ctx, nodeId), cordoned, updated_at_ms: ctx.now() };
  ctx.store.putNodeMeta(next);
  await ctx.chain.append(PLANE_CHAIN_SOURCE, NODE_KIND, {
    phase: cordoned ? 'cordon' : 'uncordon',
    node_id: nodeId,
  });
  return next;
}

/**
 * Sets and removes labels of a known node: each name and value checked (`invalid_input` naming
 * `labels.<name>`), at most {@link MAX_NODE_LABELS}; stored, then chained (`workload.node`, phase
 * `label`, with the labels as they now are). Removing a label the node does not carry is no error;
 * naming one label both to set and to remove is (`invalid_input`).
 */
export async function setLabels(
  ctx: PlaneContext,
  nodeId: string,
  change: LabelChange,
): Promise<NodeMetaRecord> {
  ctx.book.get(nodeId);
  const cur = nodeMeta(ctx, nodeId);
  const labels: Record<string, string> = { ...cur.labels };
  const both = (change.remove ?? []).find((name) => Object.hasOwn(change.set ?? {}, name));
  if (both !== undefined) {
    throw new PlaneError('invalid_input', `label ${both} is both set and removed`, { field: 'labels' });
  }
  for (const name of change.remove ?? []) {
    checkLabel(name, '');
    delete labels[name];
  }
  for (const [name, value] of Object.entries(change.set ?? {})) {
    checkLabel(name, value);
    labels[name] = value;
  }
  if (Object.keys(labels).length > MAX_NODE_LABELS) {
    throw new PlaneError('invalid_input', `a node carries at most ${MAX_NODE_LABELS} labels`, {
      field: 'labels',
    });
  }
  const next = { ...cur, labels, updated_at_ms: ctx.now() };
  ctx.store.putNodeMeta(next);
  await ctx.chain.append(PLANE_CHAIN_SOURCE, NODE_KIND, { phase: 'label', node_id: nodeId, labels });
  return next;
}

function checkLabel(name: string, value: string): void {
  const n = LabelName.safeParse(name);
  if (!n.success) {
    throw new PlaneError('invalid_input', `label ${JSON.stringify(name)}: ${n.error.issues[0]?.message}`, {
      field: 'labels',
    });
  }
  const v = LabelValue.safeParse(value);
  if (!v.success) {
    throw new PlaneError('invalid_input', `label ${name}: ${v.error.issues[0]?.message}`, {
      field: `labels.${name}`,
    });
  }
}

/** One instance a drain moved: the old one, and the new one elsewhere. */
export interface DrainMove {
  readonly instance_id: string;
  readonly to_instance_id: string;
  readonly to_node_id: string;
  readonly decision_id: string;
}

/** One instance a drain left on the node, and why (an alert names it when `alert_id` is set). */
export interface DrainLeft {
  readonly instance_id: string;
  /**
   * `not_migratable`, `pinned` and `no_order` raise an alert; `failed` (no node took it) is retried by
   * another drain; `job`: an instance of a job, which its reconciler moves (docs/jobs.md).
   */
  readonly reason: AlertReason | 'failed' | 'job';
  readonly detail: string;
  readonly alert_id: string | null;
}

/** What a drain did. */
export interface DrainReport {
  readonly node_id: string;
  /** Always true after a drain: the node takes no new places. */
  readonly cordoned: boolean;
  readonly moved: readonly DrainMove[];
  readonly left: readonly DrainLeft[];
}

/**
 * Drains a node: cordons it (chained), then moves each instance still there through the gate and the
 * engine (the stored order placed again with this node avoided, as a reschedule is: a chained
 * decision and attempts; then a chained `workload.migrate`, phase `drain`, naming both instances),
 * and stops and unloads the old one once the new one is placed. An instance whose order may not move
 * (`--no-migrate`, a Seed store cog: `not_migratable`; pinned to the node: `pinned`; its order gone:
 * `no_order`) is left where it is and an alert naming it is raised. One that no node takes is left
 * (`failed`, the reason given); draining again retries it.
 */
export async function drainNode(ctx: PlaneContext, nodeId: string): Promise<DrainReport> {
  await setCordon(ctx, nodeId, true);
  const moved: DrainMove[] = [];
  const left: DrainLeft[] = [];
  const live = ctx.store.listPlacements(nodeId).filter((p) => !isGone(p.state));
  for (const p of live) {
    const job = ctx.store.getJobInstance(p.instance_id);
    if (job !== undefined) {
      left.push({
        instance_id: p.instance_id,
        reason: 'job',
        detail: `an instance of job ${job.job}: its reconciler places a replacement on another node, then takes it down`,
        alert_id: null,
      });
      continue;
    }
    const order = ctx.store.getOrder(p.order_id);
    const stay: { reason: AlertReason; detail: string } | undefined =
      order === undefined
        ? {
            reason: 'no_order',
            detail: `drain of ${nodeId}: the order ${p.order_id} is gone; left on the node`,
          }
        : order.migratable === false || (order.store_pin !== undefined && order.store_pin !== null)
          ? {
              reason: 'not_migratable',
              detail: `drain of ${nodeId}: ${p.instance_id} may not move (placed with --no-migrate or a Seed store cog); left on the cordoned node`,
            }
          : order.node !== null
            ? {
                reason: 'pinned',
                detail: `drain of ${nodeId}: ${p.instance_id} is pinned to the node; left on the cordoned node`,
              }
            : undefined;
    if (stay !== undefined) {
      const { alert } = await raiseAlert(ctx, p, stay.reason, stay.detail);
      left.push({ instance_id: p.instance_id, ...stay, alert_id: alert.alert_id });
      continue;
    }
    // cast: order is defined here (stay covers the undefined case)
    const o = order as NonNullable<typeof order>;
    try {
      const r = await placeStoredOrder(ctx, o, {
        replaces: p.instance_id,
        reschedules: p.reschedules ?? 0,
        avoid: [nodeId],
        timeoutMs: ctx.config.placeTimeoutMs,
      });
      if (r.status !== 'placed' || r.instance === null || r.decision_id === null) {
        left.push(failed(p, `the move's answer was lost (decision ${r.decision_id}); see heddle ps`));
        continue;
      }
      await ctx.chain.append(PLANE_CHAIN_SOURCE, 'workload.migrate', {
        phase: 'drain',
        node_id: nodeId,
        instance_id: p.instance_id,
        to_instance_id: r.instance.instance_id,
        to_node_id: r.instance.node_id,
        decision_id: r.decision_id,
      });
      moved.push({
        instance_id: p.instance_id,
        to_instance_id: r.instance.instance_id,
        to_node_id: r.instance.node_id,
        decision_id: r.decision_id,
      });
      const down = await takeDown(ctx, p).then(
        () => undefined,
        (err: unknown) => errorMessage(err),
      );
      if (down !== undefined) {
        left.push(
          failed(
            p,
            `moved to ${r.instance.instance_id}, but the old instance could not be taken down: ${down}`,
          ),
        );
      }
    } catch (err) {
      left.push(failed(p, errorMessage(err)));
    }
  }
  return { node_id: nodeId, cordoned: true, moved, left };
}

function failed(p: PlacementRecord, detail: string): DrainLeft {
  return { instance_id: p.instance_id, reason: 'failed', detail: detail.slice(0, 1024), alert_id: null };
}

/** Stops (when it runs) and unloads the instance a drain moved (each chained by its verb). */
async function takeDown(ctx: PlaneContext, p: PlacementRecord): Promise<void> {
  const cur = ctx.store.getPlacement(p.instance_id) ?? p;
  if (cur.state === 'running' || cur.state === 'restarting' || cur.state === 'unhealthy') {
    await stopInstance(ctx, p.instance_id);
  }
  await unloadInstance(ctx, p.instance_id, 'moved off by a drain');
}
