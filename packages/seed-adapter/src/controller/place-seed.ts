import {
  type Attempt,
  type AttemptOutcome,
  chainAttempt,
  chainChange,
  chainDecision,
  dispatchRanked,
  dryRun,
  dryRunChecks,
  engineView,
  type OrderRecord,
  type OrderStorePin,
  orderRecord,
  PLANE_CHAIN_SOURCE,
  type PlacementRecord,
  type PlaceOrderInput,
  type PlaceResult,
  type PlaneContext,
  PlaneError,
  stageNew,
  unplaceable,
} from '@heddle/control-plane/driver';
import { deriveInstanceId } from '@heddle/model';
import { explainJson, type GovernanceVerdict, type PlacementRequest, place } from '@heddle/placement';
import { type InstanceHandle, RuntimeError, type RuntimeWorkload } from '@heddle/runtime';
import { SeedInstallUnsureError, SeedStrandedInstallError } from '../seed-install.js';
import { seedPinWorkload } from '../seed-pins.js';
import { seedFailure } from './seed-book.js';
import { seedChecks, seedContext } from './seed-gate.js';
import { type SeedHosts, seedDataDir, seedPinOf, seedVariant } from './seed-nodes.js';

/**
 * Places an operator's Seed store pin (docs/seed.md, "Under a controller"): the engine picks among the
 * Seeds (nodes with `runtime.remote.api` and `node.class.cognitum-seed`), with the gate's verdict per
 * Seed; the decision is chained; then each candidate in rank order gets a chained gate check and a
 * load (and start) through the controller's governed WorkloadHost over a `SeedApiRuntime`, whose
 * admission checks the store listing against the pin. A lost install answer is reconciled by the
 * adapter itself (it reads the installed list back).
 */
export async function placeStorePin(
  ctx: PlaneContext,
  hosts: SeedHosts,
  order: PlaceOrderInput,
  orderId: string | undefined,
): Promise<PlaceResult> {
  const pin = order.store_pin;
  if (pin === undefined)
    throw new PlaneError('invalid_input', 'order store_pin: missing', { field: 'store_pin' });
  const workload = seedPinWorkload(seedPinOf(pin));
  const now = ctx.now();
  const record = orderRecord(
    order,
    { workload: pin.id, version: pin.version, manifest_hash: '', package_id: workload.ref },
    now,
    orderId,
  );
  const request: PlacementRequest = {
    workload: pin.id,
    package_id: workload.ref,
    variants: [
      {
        name: 'store-pin',
        execution: 'native',
        requirements: [{ id: 'runtime.remote.api' }, { id: 'node.class.cognitum-seed' }],
      },
    ],
    ...(record.node === null ? {} : { pin: record.node }),
    ...(record.prefer.length === 0 ? {} : { prefer: record.prefer.map((node_id) => ({ node_id })) }),
    ...(record.avoid.length === 0 ? {} : { avoid: record.avoid.map((node_id) => ({ node_id })) }),
    ...(record.constraints === undefined || record.constraints.length === 0
      ? {}
      : { constraints: record.constraints.map((c) => ({ label: c.label, value: c.value })) }),
    ...(record.spread === undefined || record.spread === null ? {} : { spread: { label: record.spread } }),
  };
  // Every check of the real place: the controller's `workload.place`, then the install, load (and
  // start) its WorkloadHost over the Seed asks of the same gate, with the same context.
  const decision = place(request, engineView(ctx, now), ctx.reservations.state, {
    now_ms: now,
    governance: (_id, _v, node): GovernanceVerdict =>
      dryRunChecks(ctx, seedChecks(workload, node.tier, record.start)),
  });
  const explanation = explainJson(decision);
  if (order.dry_run === true) return dryRun(explanation);
  if (decision.outcome !== 'placed') throw unplaceable(decision, `${pin.id}@${pin.version}`);
  const decisionId = await chainDecision(ctx, record, decision, 'store-pin');
  ctx.store.putOrder(record);
  const ranked = [
    { node_id: decision.node_id },
    ...decision.candidates.filter((c) => c.node_id !== decision.node_id),
  ];
  return dispatchRanked(ctx, record, decisionId, ranked, decision.pinned, explanation, (c) =>
    attemptSeed(ctx, hosts, record, pin, workload, decisionId, c.node_id),
  );
}

async function attemptSeed(
  ctx: PlaneContext,
  hosts: SeedHosts,
  order: OrderRecord,
  pin: OrderStorePin,
  workload: RuntimeWorkload,
  decisionId: string,
  nodeId: string,
): Promise<Attempt> {
  const t = ctx.book.get(nodeId);
  const finish = (
    o: Omit<AttemptOutcome, 'node_id' | 'variant'>,
    placement: PlacementRecord | null = null,
  ): Promise<Attempt> =>
    chainAttempt(ctx, decisionId, order, { node_id: nodeId, variant: 'store-pin', ...o }, placement);
  const gate = await ctx.gate.check(
    ctx.nodeId,
    'workload.place',
    seedContext(workload, t.tier ?? 'discovered'),
  );
  if (gate.verdict !== 'permit')
    return finish({ outcome: 'gate_denied', code: gate.rule, reason: gate.reason });
  try {
    const host = await hosts.hostFor(ctx, t, pin);
    const handle = await host.load(workload, {
      values: { ...order.values },
      runMode: order.mode,
      host: { nodeId: t.node_id, dataDir: seedDataDir(ctx.stateDir, t.node_id) },
    });
    if (order.start) {
      try {
        await host.start(handle);
      } catch (err) {
        await host.unload(handle).catch(() => undefined);
        throw err;
      }
    }
    ctx.book.contact(nodeId);
    const placement = seedPlacement(ctx, order, decisionId, nodeId, handle, workload, order.start);
    await chainChange(ctx, stageNew(ctx, placement, 'placed'), { why: 'placed' });
    return finish({ outcome: 'placed', code: null, reason: null }, placement);
  } catch (err) {
    // The Seed may still be installing it (or holds an install that could not be undone): never place
    // it elsewhere as if nothing happened. Kept unsettled on disk; the settling pass reads the Seed.
    if (err instanceof SeedInstallUnsureError || err instanceof SeedStrandedInstallError) {
      ctx.store.putUnsettled({
        decision_id: decisionId,
        order_id: order.order_id,
        node_id: nodeId,
        expected_instance_id: seedInstanceId(workload, order, nodeId),
        variant: seedVariant(true),
        since_ms: ctx.now(),
        attempts: 1,
        last_error: err.message.slice(0, 512),
      });
      await ctx.chain.append(PLANE_CHAIN_SOURCE, 'workload.place', {
        phase: 'unsettled',
        decision_id: decisionId,
        node_id: nodeId,
        reason: err.message.slice(0, 512),
      });
      return finish({ outcome: 'unsettled', code: null, reason: err.message });
    }
    if (err instanceof RuntimeError)
      return finish({ outcome: 'refused', code: err.code, reason: err.message });
    const f = seedFailure(err, t.url);
    return finish({
      outcome: f.code === 'unreachable' ? 'unreachable' : 'refused',
      code: f.code,
      reason: f.message,
    });
  }
}

/** The instance id a Seed's adapter derives for `order` of `w` on `nodeId` (as `SeedApiRuntime.load`). */
export function seedInstanceId(w: RuntimeWorkload, order: OrderRecord, nodeId: string): string {
  return deriveInstanceId(w.id, w.ref, { ...order.values }, order.mode, nodeId);
}

/** The placement record of a Seed instance of `order` (running when `running`, else placed). */
export function seedPlacement(
  ctx: PlaneContext,
  order: OrderRecord,
  decisionId: string,
  nodeId: string,
  handle: InstanceHandle,
  workload: RuntimeWorkload,
  running: boolean,
): PlacementRecord {
  const now = ctx.now();
  return {
    instance_id: handle.instanceId,
    node_id: nodeId,
    order_id: order.order_id,
    decision_id: decisionId,
    workload: workload.id,
    version: workload.version,
    variant: seedVariant(handle.storeInstalled === true),
    runtime: handle.runtime,
    manifest_hash: '',
    package_id: workload.ref,
    signer_keys: [],
    artifact_hashes: [...workload.artifactHashes],
    state: running ? 'running' : 'placed',
    desired_running: order.start,
    placed_at_ms: now,
    updated_at_ms: now,
  };
}
