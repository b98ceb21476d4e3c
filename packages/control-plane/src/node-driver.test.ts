// The NodeDriver seam: a second kind of node is registered through `ControlPlaneOptions.drivers` alone
// (no change to the plane), and the plane sends every call about a node to the driver of its kind. The
// driver here is a fake appliance kept in memory (an outside system), beside a real `heddle-host` on
// loopback reached by the built-in host driver.
import type { JsonObject, JsonValue } from '@heddle/envelope';
import type { NodeInput } from '@heddle/placement';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Attempt,
  chainAttempt,
  chainChange,
  type InstanceVerb,
  type NodeBook,
  type NodeDriver,
  type OrderRecord,
  type PackageAttempt,
  type PlacementRecord,
  type PlaneContext,
  type SettleOutcome,
  stageNew,
  type TargetRecord,
  type UnsettledRecord,
} from './driver.js';
import {
  examplePackage,
  openPlane,
  planeError,
  startHost,
  type TestHost,
  type TestPlane,
  tempDir,
} from './test-fixtures.js';

const FAKE_ID = 'fa'.repeat(16);

/** An appliance with its own API, kept in memory: what each call did, and the instances it runs. */
class FakeApplianceDriver implements NodeDriver {
  readonly kind = 'fake';
  readonly calls: string[] = [];
  readonly running = new Map<string, boolean>();
  readonly forgotten: string[] = [];

  async add(ctx: PlaneContext, url: string, options: unknown): Promise<TargetRecord> {
    this.calls.push('add');
    const pinned =
      typeof options === 'object' && options !== null && 'tier' in options && options.tier === 'pinned';
    const tier = pinned ? 'pinned' : 'paired';
    const now = ctx.now();
    const t: TargetRecord = {
      kind: this.kind,
      node_id: FAKE_ID,
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
  }

  viewNode(book: NodeBook, t: TargetRecord, now: number): NodeInput | undefined {
    if (t.tier === null) return undefined;
    return {
      node_id: t.node_id,
      tier: t.tier,
      liveness: book.liveness.get(t.node_id, now),
      capabilities: [
        { id: 'runtime.wasi', attrs: {}, provenance: 'claimed', state: 'available', exclusive: false },
        {
          id: 'mem.system',
          attrs: { size_mb: 1024 },
          provenance: 'claimed',
          state: 'available',
          exclusive: false,
        },
      ],
    };
  }

  async refresh(ctx: PlaneContext, t: TargetRecord): Promise<TargetRecord> {
    this.calls.push('refresh');
    ctx.book.contact(t.node_id);
    const next = { ...t, last_seen_ms: ctx.now() };
    ctx.store.putTarget(next);
    return next;
  }

  async verb(
    _ctx: PlaneContext,
    _t: TargetRecord,
    p: PlacementRecord,
    method: InstanceVerb,
    body: JsonObject,
  ): Promise<{ [key: string]: JsonValue }> {
    this.calls.push(method);
    const id = p.instance_id;
    switch (method) {
      case 'workload.start':
        this.running.set(id, true);
        return { instance_id: id };
      case 'workload.stop':
        this.running.set(id, false);
        return { instance_id: id, evidence: { grace_ms: body.grace_ms ?? null } };
      case 'workload.unload':
        this.running.delete(id);
        return { instance_id: id, unloaded: true };
      case 'workload.status':
        return {
          instance: { instance_id: id, state: this.running.get(id) === true ? 'running' : 'stopped' },
        };
      case 'workload.logs':
        return { instance_id: id, lines: [`fake log of ${id}`], truncated: false };
    }
  }

  async placePackage(ctx: PlaneContext, a: PackageAttempt): Promise<Attempt> {
    this.calls.push('placePackage');
    const now = ctx.now();
    const p: PlacementRecord = {
      instance_id: `fake-${a.order.order_id}`,
      node_id: a.nodeId,
      order_id: a.order.order_id,
      decision_id: a.decisionId,
      workload: a.order.workload,
      version: a.order.version,
      variant: a.variant,
      runtime: 'wasi',
      manifest_hash: a.order.manifest_hash,
      package_id: a.order.package_id,
      signer_keys: [...a.verified.signerKeys],
      artifact_hashes: [...a.verified.artifactHashes],
      state: a.order.start ? 'running' : 'placed',
      desired_running: a.order.start,
      placed_at_ms: now,
      updated_at_ms: now,
    };
    this.running.set(p.instance_id, a.order.start);
    const placement = await chainChange(ctx, stageNew(ctx, p, 'placed'));
    return chainAttempt(
      ctx,
      a.decisionId,
      a.order,
      { node_id: a.nodeId, variant: a.variant, outcome: 'placed', code: null, reason: null },
      placement,
    );
  }

  async settle(
    ctx: PlaneContext,
    u: UnsettledRecord,
    _t: TargetRecord,
    _order: OrderRecord,
  ): Promise<SettleOutcome> {
    this.calls.push('settle');
    ctx.store.removeUnsettled(u.decision_id);
    return 'nothing';
  }

  forget(nodeId: string): void {
    this.forgotten.push(nodeId);
  }
}

let host: TestHost;
let fake: FakeApplianceDriver;
let p: TestPlane;
let dir: string;
let wasiPkg: string;
let fakeInstance = '';
let hostInstance = '';

beforeAll(async () => {
  host = await startHost(['wasi']);
  fake = new FakeApplianceDriver();
  dir = tempDir();
  p = await openPlane(dir, {}, undefined, { drivers: [fake] });
  wasiPkg = await examplePackage('wasi-cog');
});
afterAll(async () => {
  await p.close();
  await host.close();
});

describe('a second kind of node, registered without touching the plane', () => {
  it('is a kind of this plane beside the built-in host; an unknown kind is no_driver', async () => {
    expect(p.plane.nodeKinds()).toEqual(['host', 'fake']);
    const none = await planeError(p.plane.addNodeOf('nope', 'x://y', {}));
    expect(none.code).toBe('no_driver');
    const view = await p.plane.addNodeOf('fake', 'fake://appliance-1', { tier: 'paired' });
    expect(view).toMatchObject({ node_id: FAKE_ID, routes: ['wasi'], liveness: 'alive' });
    expect(p.store.getTarget(FAKE_ID)?.kind).toBe('fake');
    const badTier = await planeError(p.plane.addNodeOf('host', host.url, { tier: 'gold' }));
    expect({ code: badTier.code, field: badTier.field }).toEqual({ code: 'invalid_input', field: 'tier' });
    await p.plane.addNodeOf('host', host.url, { tier: 'paired' }); // the host driver's add: a signed describe
    expect(p.store.getTarget(host.service.nodeId)?.kind).toBeUndefined();
  });

  it('places through the driver of the chosen node: the fake one for the fake node, the wire for the host', async () => {
    const onFake = await p.plane.place({ package_dir: wasiPkg, node: FAKE_ID, mode: { type: 'listener' } });
    expect(onFake).toMatchObject({ status: 'placed', instance: { node_id: FAKE_ID, runtime: 'wasi' } });
    fakeInstance = onFake.instance?.instance_id ?? '';
    expect(fake.calls).toEqual(['add', 'placePackage']);
    const onHost = await p.plane.place({
      package_dir: wasiPkg,
      node: host.service.nodeId,
      mode: { type: 'listener' },
    });
    expect(onHost.status).toBe('placed');
    hostInstance = onHost.instance?.instance_id ?? '';
    expect(fake.calls).toEqual(['add', 'placePackage']); // the host's place went over the wire
  });

  it('sends each instance verb to the driver of the instance’s node', async () => {
    fake.calls.length = 0;
    expect((await p.plane.status(fakeInstance)).node).toEqual({
      instance_id: fakeInstance,
      state: 'running',
    });
    expect((await p.plane.logs(fakeInstance)).lines).toEqual([`fake log of ${fakeInstance}`]);
    expect((await p.plane.stop(fakeInstance, 250)).evidence).toEqual({ grace_ms: 250 });
    expect(fake.running.get(fakeInstance)).toBe(false);
    await p.plane.start(fakeInstance);
    expect(fake.running.get(fakeInstance)).toBe(true);
    expect(fake.calls).toEqual(['workload.status', 'workload.logs', 'workload.stop', 'workload.start']);
    const remote = (await p.plane.status(hostInstance)).node;
    expect(remote).toMatchObject({ instance_id: hostInstance });
    expect(fake.calls).toHaveLength(4); // the host's status went over the wire
  });

  it('refreshes, ticks and settles each node through its driver', async () => {
    fake.calls.length = 0;
    await p.plane.refreshNodes();
    expect(fake.calls).toEqual(['refresh']);
    const report = await p.plane.tick();
    expect([...report.reachable].sort()).toEqual([FAKE_ID, host.service.nodeId].sort());
    expect(report.errors).toEqual([]);
    expect(fake.calls).toEqual(['refresh', 'refresh']);
    const order = p.store.getPlacement(fakeInstance)?.order_id ?? '';
    p.store.putUnsettled({
      decision_id: 'd'.repeat(64),
      order_id: order,
      node_id: FAKE_ID,
      expected_instance_id: null,
      variant: 'wasm32-wasi',
      since_ms: Date.now(),
      attempts: 0,
      last_error: 'a lost answer',
    });
    const settled = await p.plane.settle();
    expect(settled.nothing).toEqual(['d'.repeat(64)]);
    expect(fake.calls).toEqual(['refresh', 'refresh', 'settle']);
  });

  it('a plane opened without the driver keeps the node but refuses to drive it (no_driver), and drives the rest', async () => {
    await p.close(); // one connection holds the state database at a time
    const other = await openPlane(dir);
    try {
      expect(other.plane.nodes().map((n) => n.node_id)).toContain(FAKE_ID);
      expect((await planeError(other.plane.status(fakeInstance))).code).toBe('no_driver');
      await other.plane.refreshNodes();
      expect(other.store.getTarget(FAKE_ID)?.unreachable_since_ms).toBeNull();
      expect((await other.plane.status(hostInstance)).placement.node_id).toBe(host.service.nodeId);
      const dry = await other.plane.place({ package_dir: wasiPkg, dry_run: true });
      expect(dry.explanation.rows.map((r) => r.node_id)).not.toContain(FAKE_ID);
    } finally {
      await other.close();
      p = await openPlane(dir, {}, undefined, { drivers: [fake] });
    }
  });

  it('tells the driver when its node is removed', async () => {
    await p.plane.unload(fakeInstance);
    await p.plane.removeNode(FAKE_ID);
    expect(fake.forgotten).toEqual([FAKE_ID]);
  });
});
