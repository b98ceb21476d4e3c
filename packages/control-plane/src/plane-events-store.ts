import { AsyncLocalStorage } from 'node:async_hooks';
import type { PlaneEventMap, PlaneEvents, PlaneEventType } from './plane-events.js';
import type { AlertRecord, PlacementRecord, StateStore, TargetRecord } from './state-store.js';

type Pending = { readonly [K in PlaneEventType]: readonly [K, PlaneEventMap[K]] }[PlaneEventType];

/**
 * A {@link StateStore} that publishes the changes written through it to `events`: placements
 * (placed, state changed, rescheduled, removed), targets (joined, removed) and alerts (opened,
 * closed). Events are published only once durable: writes inside {@link StateStore.transaction} are
 * held until the outermost transaction commits, and dropped with the writes of a transaction (or a
 * nested one) that throws. Every other call goes straight to `inner`.
 */
export function eventingStore(inner: StateStore, events: PlaneEvents): StateStore {
  let depth = 0;
  let pending: Pending[] = [];
  // Under group commit (inside `grouped`) a write returns before it is durable: its events wait for
  // `durable()` (in write order), and are dropped when the transaction that held the write failed and
  // undid it. Every other write is durable when it returns: its events are published at once.
  const inGroup = new AsyncLocalStorage<true>();
  let tail: Promise<void> = Promise.resolve();
  const publish = (batch: readonly Pending[]): void => {
    if (batch.length === 0) return;
    if (inner.durable === undefined || inGroup.getStore() !== true) {
      for (const e of batch) events.publish(e[0], e[1]);
      return;
    }
    const settled = inner.durable();
    tail = tail.then(() =>
      settled.then(
        () => {
          for (const e of batch) events.publish(e[0], e[1]);
        },
        () => undefined,
      ),
    );
  };
  const emit = (e: Pending): void => {
    if (depth > 0) pending.push(e);
    else publish([e]);
  };
  const alertData = (a: AlertRecord): PlaneEventMap['alert.opened'] => ({
    alert_id: a.alert_id,
    instance_id: a.instance_id,
    node_id: a.node_id,
    reason: a.reason,
    detail: a.detail,
  });
  const placementEvents = (prev: PlacementRecord | undefined, p: PlacementRecord): void => {
    if (prev === undefined) {
      emit([
        'instance.placed',
        {
          instance_id: p.instance_id,
          node_id: p.node_id,
          order_id: p.order_id,
          decision_id: p.decision_id,
          workload: p.workload,
          version: p.version,
          variant: p.variant,
          state: p.state,
          replaces: p.replaces ?? null,
        },
      ]);
      if (p.replaces !== undefined && p.replaces !== null) {
        emit([
          'instance.rescheduled',
          {
            instance_id: p.instance_id,
            replaces: p.replaces,
            node_id: p.node_id,
            workload: p.workload,
            reschedules: p.reschedules ?? 1,
          },
        ]);
      }
    } else if (prev.state !== p.state) {
      emit([
        'instance.state_changed',
        {
          instance_id: p.instance_id,
          node_id: p.node_id,
          workload: p.workload,
          from: prev.state,
          to: p.state,
        },
      ]);
    }
  };
  const targetEvents = (prev: TargetRecord | undefined, t: TargetRecord): void => {
    if (prev !== undefined) return;
    emit(['node.joined', { node_id: t.node_id, url: t.url, tier: t.tier, kind: t.kind ?? 'host' }]);
  };
  const store: StateStore = {
    transaction<T>(fn: () => T): T {
      const mark = pending.length;
      depth += 1;
      let result: T;
      try {
        result = inner.transaction(fn);
      } catch (err) {
        pending = pending.slice(0, mark);
        throw err;
      } finally {
        depth -= 1;
      }
      if (depth === 0) {
        const out = pending;
        pending = [];
        publish(out);
      }
      return result;
    },
    getTarget: (id) => inner.getTarget(id),
    listTargets: () => inner.listTargets(),
    targetIdsAt: (url) =>
      inner.targetIdsAt?.(url) ?? inner.listTargets().flatMap((t) => (t.url === url ? [t.node_id] : [])),
    putTarget(t) {
      const prev = inner.getTarget(t.node_id);
      inner.putTarget(t);
      targetEvents(prev, t);
    },
    removeTarget(id) {
      const removed = inner.removeTarget(id);
      if (removed) emit(['node.removed', { node_id: id }]);
      return removed;
    },
    getOrder: (id) => inner.getOrder(id),
    listOrders: () => inner.listOrders(),
    putOrder: (o) => inner.putOrder(o),
    removeOrder: (id) => inner.removeOrder(id),
    getPlacement: (id) => inner.getPlacement(id),
    listPlacements: (nodeId) => inner.listPlacements(nodeId),
    putPlacement(p) {
      const prev = inner.getPlacement(p.instance_id);
      inner.putPlacement(p);
      placementEvents(prev, p);
    },
    removePlacement(id) {
      const prev = inner.getPlacement(id);
      const removed = inner.removePlacement(id);
      if (removed && prev !== undefined)
        emit(['instance.removed', { instance_id: id, node_id: prev.node_id }]);
      return removed;
    },
    getIdempotencyKey: (k) => inner.getIdempotencyKey(k),
    putIdempotencyKey: (r) => inner.putIdempotencyKey(r),
    removeIdempotencyKey: (k) => inner.removeIdempotencyKey(k),
    pruneIdempotencyKeys: (ms) => inner.pruneIdempotencyKeys(ms),
    getUnsettled: (id) => inner.getUnsettled(id),
    listUnsettled: () => inner.listUnsettled(),
    putUnsettled: (r) => inner.putUnsettled(r),
    removeUnsettled: (id) => inner.removeUnsettled(id),
    getPlaceClaim: (id) => inner.getPlaceClaim(id),
    listPlaceClaims: () => inner.listPlaceClaims(),
    putPlaceClaim: (r) => inner.putPlaceClaim(r),
    removePlaceClaim: (id) => inner.removePlaceClaim(id),
    nodeLoad: (nodeId, since) => inner.nodeLoad(nodeId, since),
    prunePlaceClaims: (nodeId, before) => inner.prunePlaceClaims(nodeId, before),
    getReschedule: (id) => inner.getReschedule(id),
    listReschedules: () => inner.listReschedules(),
    putReschedule: (r) => inner.putReschedule(r),
    removeReschedule: (id) => inner.removeReschedule(id),
    getAlert: (id) => inner.getAlert(id),
    listAlerts: () => inner.listAlerts(),
    putAlert(a) {
      const prev = inner.getAlert(a.alert_id);
      inner.putAlert(a);
      if (prev === undefined && a.acked_at_ms === null) emit(['alert.opened', alertData(a)]);
      else if ((prev === undefined || prev.acked_at_ms === null) && a.acked_at_ms !== null)
        emit(['alert.closed', alertData(a)]);
    },
    getNodeMeta: (id) => inner.getNodeMeta(id),
    listNodeMeta: () => inner.listNodeMeta(),
    putNodeMeta: (r) => inner.putNodeMeta(r),
    removeNodeMeta: (id) => inner.removeNodeMeta(id),
    getJob: (name) => inner.getJob(name),
    listJobs: () => inner.listJobs(),
    putJob(r) {
      const prev = inner.getJob(r.name);
      inner.putJob(r);
      const same =
        prev !== undefined &&
        prev.version === r.version &&
        prev.status === r.status &&
        prev.rollout === r.rollout &&
        prev.blocked === r.blocked;
      if (!same)
        emit([
          'job.updated',
          { job: r.name, version: r.version, status: r.status, rollout: r.rollout, blocked: r.blocked },
        ]);
    },
    removeJob: (name) => inner.removeJob(name),
    getJobVersion: (job, version) => inner.getJobVersion(job, version),
    listJobVersions: (job) => inner.listJobVersions(job),
    putJobVersion: (r) => inner.putJobVersion(r),
    getJobInstance: (id) => inner.getJobInstance(id),
    listJobInstances: (job) => inner.listJobInstances(job),
    putJobInstance: (r) => inner.putJobInstance(r),
    removeJobInstance: (id) => inner.removeJobInstance(id),
    getRevocationAck: (id) => inner.getRevocationAck(id),
    listRevocationAcks: () => inner.listRevocationAcks(),
    putRevocationAck: (r) => inner.putRevocationAck(r),
    removeRevocationAck: (id) => inner.removeRevocationAck(id),
    getRevocationList: () => inner.getRevocationList(),
    putRevocationList: (r) => inner.putRevocationList(r),
    get schemaVersion() {
      return inner.schemaVersion;
    },
    close: () => inner.close(),
  };
  // Group commit and the live view's notifications pass straight through (only when `inner` has them).
  if (inner.grouped !== undefined) {
    const grouped = inner.grouped.bind(inner);
    store.grouped = <T>(fn: () => Promise<T>): Promise<T> => grouped(() => inGroup.run(true, fn));
  }
  if (inner.durable !== undefined) store.durable = inner.durable.bind(inner);
  if (inner.watchTargets !== undefined) store.watchTargets = inner.watchTargets.bind(inner);
  if (inner.watchShared !== undefined) store.watchShared = inner.watchShared.bind(inner);
  return store;
}
