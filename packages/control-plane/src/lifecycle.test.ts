import { RevocationList } from '@heddle/package';
import { okOutcome, signResponse } from '@heddle/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import type { PlaceResult } from './place.js';
import {
  examplePackage,
  openPlane,
  operatorKeys,
  startHost,
  type TestHost,
  type TestPlane,
  tempDir,
} from './test-fixtures.js';

// The lifecycle tick (docs/lifecycle.md) against real hosts on loopback. The controller's clock is injected:
// real time plus an offset the test advances (kept under the protocol's 30 s skew, since requests are
// signed with it), with short tunables.

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const x of open.splice(0).reverse()) await x.close().catch(() => undefined);
});

const TUNABLES = {
  deadAfterMs: 1_000,
  suspectAfterMs: 500,
  rescheduleBackoffMs: 1_000,
  rescheduleBackoffMaxMs: 4_000,
  rescheduleTimeoutMs: 10_000,
};

/** Real time plus an offset the test moves forward. */
class Clock {
  offset = 0;
  #pinned: number | undefined;
  readonly now = (): number => this.#pinned ?? Date.now() + this.offset;
  advance(ms: number): void {
    this.offset += ms;
  }
  /** Holds the time at `ms` until {@link release}: a tick that reads it late (a loaded machine) reads `ms`. */
  pin(ms: number): void {
    this.#pinned = ms;
  }
  /** Lets the time run on from where it was pinned. */
  release(): void {
    if (this.#pinned !== undefined) this.offset = this.#pinned - Date.now();
    this.#pinned = undefined;
  }
}

async function host(...a: Parameters<typeof startHost>): Promise<TestHost> {
  const h = await startHost(...a);
  open.push(h);
  return h;
}

async function plane(
  clock: Clock,
  dir?: string,
  config: Parameters<typeof openPlane>[1] = {},
): Promise<TestPlane> {
  const p = await openPlane(dir, { ...TUNABLES, ...config }, clock.now);
  open.push(p);
  return p;
}

async function closePlane(p: TestPlane): Promise<void> {
  await p.close();
  open.splice(open.indexOf(p), 1);
}

/** A continuous (interval) WASI instance, placed and started on `node` (preferred, or pinned). */
async function placeOn(
  p: TestPlane,
  node: string,
  noConsole = true,
  pin = false,
  migratable = true,
): Promise<PlaceResult> {
  const dir = await examplePackage('wasi-cog', false, noConsole);
  await p.plane.refreshNodes(); // fresh contact: the short suspect window of these tests
  return p.plane.place({
    package_dir: dir,
    mode: { type: 'interval', secs: 60 },
    start: true,
    ...(migratable ? {} : { migratable: false }),
    ...(pin ? { node } : { prefer: [node] }),
  });
}

/** Two WASI hosts known to a plane on a test clock. */
async function twoHosts(dir?: string): Promise<{ clock: Clock; x: TestHost; y: TestHost; p: TestPlane }> {
  const clock = new Clock();
  const x = await host(['wasi']);
  const y = await host(['wasi']);
  const p = await plane(clock, dir);
  await p.plane.addNode(x.url, { tier: 'paired' });
  await p.plane.addNode(y.url, { tier: 'paired' });
  return { clock, x, y, p };
}

/** {@link twoHosts} (its plane in `dir`) with a continuous instance placed: `a` holds it, `b` is the other host. */
async function placedOnOneOfTwo(dir?: string): Promise<{
  clock: Clock;
  p: TestPlane;
  r: PlaceResult;
  a: TestHost;
  b: TestHost;
}> {
  const { clock, x, y, p } = await twoHosts(dir);
  const r = await placeOn(p, x.service.nodeId);
  const [a, b] = byPlacement(r, x, y);
  return { clock, p, r, a, b };
}

/** The host `r` placed on first, then the other one. */
function byPlacement(r: PlaceResult, x: TestHost, y: TestHost): [TestHost, TestHost] {
  return r.instance?.node_id === x.service.nodeId ? [x, y] : [y, x];
}

/** Marks the node unreachable (a tick), then lets `deadAfterMs` pass and ticks again. */
async function killAndDeclareDead(p: TestPlane, clock: Clock, h: TestHost) {
  await h.server.close();
  const first = await p.plane.tick();
  expect(first.dead).toEqual([]);
  clock.advance(TUNABLES.deadAfterMs + 100);
  return p.plane.tick();
}

const lifecycle = (p: TestPlane, id: string): [string, string, string][] =>
  p.chain
    .find({ source: 'workload.placement', kind: 'workload.lifecycle' })
    .map((e) => e.payload as { instance_id: string; from: string; to: string; reason: string })
    .filter((e) => e.instance_id === id)
    .map((e) => [e.from, e.to, e.reason]);

describe('node death and rescheduling', () => {
  it('a dead node: its instance becomes lost and is placed again elsewhere, the dead node avoided; when the node returns, the orphan is unloaded', async () => {
    const { clock, x, y, p } = await twoHosts();
    const r = await placeOn(p, x.service.nodeId);
    const old = r.instance?.instance_id as string;
    const [a, b] = byPlacement(r, x, y);
    clock.advance(10);
    const quiet = await p.plane.tick();
    expect(quiet).toMatchObject({ lost: [], rescheduled: [], errors: [] });

    const t = await killAndDeclareDead(p, clock, a);
    expect(t.dead).toEqual([a.service.nodeId]);
    expect(t.lost).toEqual([old]);
    expect(t.rescheduled).toEqual([
      { instance_id: old, replaced_by: expect.any(String), node_id: b.service.nodeId },
    ]);
    const replacement = t.rescheduled[0]?.replaced_by as string;
    expect(p.plane.instance(old).state).toBe('rescheduled');
    expect(p.plane.instance(replacement)).toMatchObject({
      node_id: b.service.nodeId,
      replaces: old,
      reschedules: 1,
      desired_running: true,
    });
    expect(b.service.instanceIds()).toEqual([replacement]);
    // The reschedule's decision never considered the dead node.
    const decision = p.chain
      .find({ source: 'workload.placement', kind: 'workload.place' })
      .map((e) => e.payload as { phase: string; reschedule_of?: string; candidates: string[] })
      .find((e) => e.phase === 'decision' && e.reschedule_of === old);
    expect(decision?.candidates).toEqual([b.service.nodeId]);
    expect(lifecycle(p, old).map(([f, to]) => `${f}>${to}`)).toContain('lost>rescheduled');
    expect(lifecycle(p, old)).toContainEqual([expect.any(String), 'lost', 'node dead']);

    // The dead node comes back: the replaced instance is an orphan there and is unloaded.
    expect(a.service.instanceIds()).toEqual([old]);
    await a.restart();
    clock.advance(10);
    const back = await p.plane.tick();
    expect(back.orphans_unloaded).toEqual([old]);
    expect(a.service.instanceIds()).toEqual([]);
    expect(p.plane.instance(old).state).toBe('unloaded');
    expect(p.plane.instance(replacement).state).not.toBe('lost');
    expect(p.chain.verify().ok).toBe(true);
  });

  it('a fenced tick (its controller lost the leadership lease) neither loses nor replaces anything', async () => {
    const { clock, p, r, a } = await placedOnOneOfTwo();
    const old = r.instance?.instance_id as string;
    await a.server.close();
    await p.plane.tick();
    clock.advance(TUNABLES.deadAfterMs + 100);
    const fenced = await p.plane.tick(() => false);
    expect(fenced.dead).toEqual([a.service.nodeId]); // it saw the death ...
    expect(fenced).toMatchObject({ lost: [], rescheduled: [] }); // ... and wrote nothing about it
    expect(fenced.errors).toContain('fenced: leadership lost, the rest of this tick was not run');
    expect(p.plane.instance(old).state).not.toBe('lost');
    // The leader (the fence holds) does the work.
    const led = await p.plane.tick(() => true);
    expect(led.lost).toEqual([old]);
    expect(led.rescheduled).toHaveLength(1);
  });

  it('a pinned order raises an alert once instead; when its node returns the lost instance is adopted back', async () => {
    const clock = new Clock();
    const a = await host(['wasi']);
    const b = await host(['wasi']);
    const p = await plane(clock);
    await p.plane.addNode(a.url, { tier: 'paired' });
    await p.plane.addNode(b.url, { tier: 'paired' });
    const r = await placeOn(p, a.service.nodeId, true, true);
    const id = r.instance?.instance_id as string;
    const t = await killAndDeclareDead(p, clock, a);
    expect(t.lost).toEqual([id]);
    expect(t.rescheduled).toEqual([]);
    expect(t.alerts).toEqual([
      expect.objectContaining({ instance_id: id, reason: 'pinned', acked_at_ms: null }),
    ]);
    clock.advance(500);
    expect((await p.plane.tick()).alerts).toEqual([]); // recorded once
    expect(p.plane.alerts()).toHaveLength(1);
    expect(p.plane.reschedules()).toEqual([]);
    expect(b.service.instanceIds()).toEqual([]);

    await a.restart();
    clock.advance(10);
    const back = await p.plane.tick();
    expect(back.adopted).toEqual([id]);
    expect(back.orphans_unloaded).toEqual([]);
    expect(a.service.instanceIds()).toEqual([id]);
    expect(['running', 'loaded', 'stopped']).toContain(p.plane.instance(id).state);
    expect(lifecycle(p, id).at(-1)?.[2]).toBe('adopted back: still on its node');

    const alert = p.plane.alerts()[0];
    const acked = await p.plane.ackAlert(alert?.alert_id as string);
    expect(acked.acked_at_ms).not.toBeNull();
    expect(p.plane.alerts({ unacknowledged: true })).toEqual([]);
    await expect(p.plane.ackAlert('al-0000000000000000')).rejects.toMatchObject({ code: 'unknown_alert' });
    expect(
      p.chain.find({ kind: 'workload.alert' }).map((e) => (e.payload as { phase: string }).phase),
    ).toEqual(['raised', 'acknowledged']);
  });

  it('an order placed with migratable false is not moved: alert not_migratable', async () => {
    const { clock, x, y, p } = await twoHosts();
    const r = await placeOn(p, x.service.nodeId, false, false, false);
    const [a, b] = byPlacement(r, x, y);
    const t = await killAndDeclareDead(p, clock, a);
    expect(t.alerts).toEqual([
      expect.objectContaining({
        instance_id: r.instance?.instance_id,
        reason: 'not_migratable',
        detail: expect.stringContaining('migratable false'),
      }),
    ]);
    expect(t.rescheduled).toEqual([]);
    expect(b.service.instanceIds()).toEqual([]);
  });

  it('a lineage rescheduled the most times allowed raises an alert instead of a sixth reschedule', async () => {
    const { clock, p, r, a, b } = await placedOnOneOfTwo();
    const id = r.instance?.instance_id as string;
    p.store.putPlacement({ ...p.plane.instance(id), reschedules: 5 });
    const t = await killAndDeclareDead(p, clock, a);
    expect(t.lost).toEqual([id]);
    expect(t.rescheduled).toEqual([]);
    expect(t.alerts).toEqual([
      expect.objectContaining({
        instance_id: id,
        reason: 'reschedule_limit',
        detail: expect.stringContaining('5'),
      }),
    ]);
    expect(b.service.instanceIds()).toEqual([]);
  });

  it('the only node that can run it comes back without it: it is placed there again, not avoided for good', async () => {
    const clock = new Clock();
    const a = await host(['wasi'], 0x7e);
    const p = await plane(clock);
    await p.plane.addNode(a.url, { tier: 'paired' });
    const r = await placeOn(p, a.service.nodeId);
    const id = r.instance?.instance_id as string;
    const t = await killAndDeclareDead(p, clock, a);
    expect(t.lost).toEqual([id]);
    expect(t.waiting).toHaveLength(1);
    // The machine comes back re-imaged: same key, same address, nothing of what it ran.
    await a.close();
    const again = await host(['wasi'], 0x7e, Number(new URL(a.url).port));
    expect(again.service.nodeId).toBe(a.service.nodeId);
    clock.advance(TUNABLES.rescheduleBackoffMaxMs + 100);
    await p.plane.tick();
    expect(again.service.instanceIds()).toEqual([id]);
    expect(p.plane.instance(id).state).toBe('running');
    expect(p.plane.reschedules()).toEqual([]);
  });

  it('no node can take it: retried with backoff (doubling, capped), then placed when a node appears', async () => {
    const clock = new Clock();
    const a = await host(['wasi']);
    const p = await plane(clock);
    await p.plane.addNode(a.url, { tier: 'paired' });
    const r = await placeOn(p, a.service.nodeId);
    const id = r.instance?.instance_id as string;
    const t = await killAndDeclareDead(p, clock, a);
    expect(t.lost).toEqual([id]);
    expect(t.waiting).toEqual([
      { instance_id: id, next_at_ms: expect.any(Number), reason: expect.any(String) },
    ]);
    const row = () => p.plane.reschedules()[0];
    const due = (): number => (row()?.next_at_ms ?? 0) - clock.now();
    expect(row()).toMatchObject({ attempts: 1, reschedules: 1, avoid: [a.service.nodeId] });
    expect(due()).toBeGreaterThan(800);
    expect(due()).toBeLessThanOrEqual(1_000);
    // Not due yet: nothing is tried.
    clock.advance(500);
    expect((await p.plane.tick()).waiting).toEqual([]);
    expect(row()?.attempts).toBe(1);
    // 1 s, then 2 s, then 4 s, then capped at 4 s.
    const waits: number[] = [];
    for (let i = 0; i < 3; i++) {
      clock.advance(due() + 1);
      await p.plane.tick();
      waits.push(Math.round(due() / 500) * 500);
    }
    expect(waits).toEqual([2_000, 4_000, 4_000]);
    expect(row()?.attempts).toBe(4);

    const b = await host(['wasi']);
    await p.plane.addNode(b.url, { tier: 'paired' });
    clock.advance(due() + 1);
    const placed = await p.plane.tick();
    expect(placed.rescheduled).toEqual([
      { instance_id: id, replaced_by: expect.any(String), node_id: b.service.nodeId },
    ]);
    expect(p.plane.reschedules()).toEqual([]);
  });
});

describe('a reschedule whose answer is lost', () => {
  it('stays on its row until settling records the replacement, then finishes with the lineage', async () => {
    const clock = new Clock();
    const x = await host(['wasi']);
    const y = await host(['wasi']);
    const p = await plane(clock, undefined, { reconcileTimeoutMs: 300 });
    await p.plane.addNode(x.url, { tier: 'paired' });
    await p.plane.addNode(y.url, { tier: 'paired' });
    const r = await placeOn(p, x.service.nodeId);
    const id = r.instance?.instance_id as string;
    const [a, b] = byPlacement(r, x, y);
    // b places the replacement, then its answer and every call after it are lost for a while.
    let blocked = false;
    b.intercept((real) => async (signed, ctx) => {
      if (blocked) throw new Error('partitioned');
      const answer = await real(signed, ctx);
      if ((JSON.parse(signed.payload) as { method: string }).method === 'workload.place') {
        blocked = true;
        throw new Error('the answer was lost');
      }
      return answer;
    });
    const t = await killAndDeclareDead(p, clock, a);
    expect(t.lost).toEqual([id]);
    expect(t.rescheduled).toEqual([]);
    const row = p.plane.reschedules()[0];
    expect(row?.decision_id).toMatch(/^[0-9a-f]{64}$/);
    expect(p.plane.unsettled().map((u) => u.decision_id)).toEqual([row?.decision_id]);
    expect(b.service.instanceIds()).toHaveLength(1);

    blocked = false;
    b.intercept(undefined);
    clock.advance(10);
    const settled = await p.plane.tick();
    expect(settled.settle.placed).toEqual([row?.decision_id]);
    clock.advance(10);
    const done = await p.plane.tick();
    const replacement = b.service.instanceIds()[0] as string;
    expect(done.rescheduled).toEqual([
      { instance_id: id, replaced_by: replacement, node_id: b.service.nodeId },
    ]);
    expect(p.plane.instance(id).state).toBe('rescheduled');
    expect(p.plane.instance(replacement)).toMatchObject({
      replaces: id,
      reschedules: 1,
      desired_running: true,
    });
    expect(p.plane.reschedules()).toEqual([]);
  });
});

describe('controller restart', () => {
  it('continues a reschedule from SQLite', async () => {
    const dir = tempDir();
    const { clock, p: first, r, a, b } = await placedOnOneOfTwo(dir);
    const id = r.instance?.instance_id as string;
    await b.server.close();
    const t = await killAndDeclareDead(first, clock, a);
    expect(t.lost).toEqual([id]);
    expect(t.rescheduled).toEqual([]);
    expect(first.plane.reschedules()).toEqual([expect.objectContaining({ instance_id: id, attempts: 1 })]);
    await closePlane(first);

    await b.restart();
    const second = await plane(clock, dir);
    expect(second.plane.reschedules()).toEqual([expect.objectContaining({ instance_id: id, attempts: 1 })]);
    // A fresh restart is not death: the nodes come back unreachable until described, and A (still
    // down) is not declared dead before deadAfterMs of this process's own observation.
    expect((await second.plane.tick()).dead).toEqual([]);
    clock.advance(TUNABLES.rescheduleBackoffMs + 10);
    const t2 = await second.plane.tick();
    expect(t2.rescheduled).toEqual([
      { instance_id: id, replaced_by: expect.any(String), node_id: b.service.nodeId },
    ]);
    expect(second.plane.instance(id).state).toBe('rescheduled');
    expect(second.plane.reschedules()).toEqual([]);
    expect(second.chain.verify().ok).toBe(true);
  });
});

describe('host listing reconciliation', () => {
  it('an instance its host no longer lists (the host restarted without it) is lost and placed again, the node itself not avoided', async () => {
    const clock = new Clock();
    const a = await host(['wasi'], 0x61);
    const p = await plane(clock);
    await p.plane.addNode(a.url, { tier: 'paired' });
    const r = await placeOn(p, a.service.nodeId);
    const id = r.instance?.instance_id as string;
    clock.advance(10);
    expect((await p.plane.tick()).lost).toEqual([]);
    // The host comes back with the same key and address, but without the instance.
    await a.close();
    open.splice(open.indexOf(a), 1);
    const again = await host(['wasi'], 0x61, Number(new URL(a.url).port));
    expect(again.service.nodeId).toBe(a.service.nodeId);
    clock.advance(10);
    const t = await p.plane.tick();
    expect(t.dead).toEqual([]);
    expect(t.lost).toEqual([id]);
    expect(lifecycle(p, id)).toContainEqual([expect.any(String), 'lost', 'not listed by its node']);
    expect(t.rescheduled).toEqual([
      { instance_id: id, replaced_by: expect.any(String), node_id: again.service.nodeId },
    ]);
    expect(again.service.instanceIds()).toEqual([t.rescheduled[0]?.replaced_by]);
  });

  it('a host that stopped an instance when the controller lease expired gets a start when the controller is back', async () => {
    const clock = new Clock();
    const a = await host(['wasi'], undefined, 0, { leaseMs: 1_000, supervisor: { intervalMs: 50 } });
    const p = await plane(clock);
    await p.plane.addNode(a.url, { tier: 'paired' });
    const r = await placeOn(p, a.service.nodeId);
    const id = r.instance?.instance_id as string;
    // No call reaches the host for longer than its lease: it stops the instance (chained there).
    const leaseStopped = (): boolean =>
      a.chain.find({ kind: 'workload.lifecycle' }).some((e) => {
        const x = e.payload as { instance_id: string; to: string; reason: string };
        return x.instance_id === id && x.to === 'stopped' && /lease/.test(x.reason);
      });
    for (let i = 0; i < 100 && !leaseStopped(); i++) await new Promise((res) => setTimeout(res, 50));
    expect(leaseStopped()).toBe(true);
    clock.advance(10);
    const t = await p.plane.tick();
    expect(t.restarted).toEqual([id]);
    expect(p.plane.instance(id)).toMatchObject({ state: 'running', desired_running: true });
    expect(lifecycle(p, id).at(-1)).toEqual([
      expect.any(String),
      'running',
      'lease resumed: its controller is back',
    ]);
    const s = await p.plane.status(id);
    expect(s.node).toMatchObject({ lease_stopped: false });
  });
});

describe('at most once with a lease (issue 15 item 12)', () => {
  it('a dead host with a lease: its instance is replaced only once that lease has surely expired', async () => {
    const clock = new Clock();
    // The lease (3 s) outlasts dead_after (1 s): replacing at dead_after would run two copies.
    const lease = { leaseMs: 3_000, supervisor: { intervalMs: 50, stopGraceMs: 100 } };
    const x = await host(['wasi'], undefined, 0, lease);
    const y = await host(['wasi'], undefined, 0, lease);
    const p = await plane(clock, undefined, { clockSkewMs: 500 });
    await p.plane.addNode(x.url, { tier: 'paired' });
    await p.plane.addNode(y.url, { tier: 'paired' });
    expect(p.store.getTarget(x.service.nodeId)?.lease_ms).toBe(3_000 + 50 + 100);
    const beforePlace = clock.now();
    const r = await placeOn(p, x.service.nodeId);
    const old = r.instance?.instance_id as string;
    const [a, b] = byPlacement(r, x, y);
    const t = await killAndDeclareDead(p, clock, a);
    expect(t.lost).toEqual([old]);
    expect(t.rescheduled).toEqual([]);
    expect(t.waiting).toEqual([
      expect.objectContaining({ instance_id: old, reason: expect.stringMatching(/lease/) }),
    ]);
    // Not before the last request that reached it + its lease and stop time + the clock skew.
    const safe = t.waiting[0]?.next_at_ms as number;
    expect(safe).toBeGreaterThanOrEqual(beforePlace + 3_150 + 500);
    // 200 ms before it, pinned: on a loaded machine the tick may read the time more than 200 ms later.
    clock.pin(safe - 200);
    expect((await p.plane.tick()).rescheduled).toEqual([]);
    expect(b.service.instanceIds()).toEqual([]);
    clock.release();
    clock.advance(400);
    const moved = await p.plane.tick();
    expect(moved.rescheduled).toEqual([
      { instance_id: old, replaced_by: expect.any(String), node_id: b.service.nodeId },
    ]);
  });
});

describe('revocation distribution', () => {
  it('pushRevocations marks the placements revoked at once, tears them down on reachable hosts, and a host that was away gets it on its next tick', async () => {
    const { clock, p, r, a, b } = await placedOnOneOfTwo();
    const id = r.instance?.instance_id as string;
    await b.server.close();
    await p.plane.refreshNodes();
    const list = RevocationList.empty().add(
      { kind: 'package', ref: r.instance?.package_id as string, revokedAtMs: Date.now(), reason: 'test' },
      operatorKeys,
    );
    const report = await p.plane.pushRevocations(list.toJSON());
    expect(report.generation).toBe(1);
    expect(report.revoked).toEqual([id]);
    expect(report.nodes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          node_id: a.service.nodeId,
          outcome: 'applied',
          generation: 1,
          torn_down: [id],
        }),
        expect.objectContaining({ node_id: b.service.nodeId, outcome: 'skipped', generation: 0 }),
      ]),
    );
    expect(p.plane.instance(id).state).toBe('revoked');
    expect(a.service.instanceIds()).toEqual([]);

    await b.restart();
    clock.advance(10);
    const t = await p.plane.tick();
    expect(t.revocations_pushed).toEqual([
      expect.objectContaining({ node_id: b.service.nodeId, outcome: 'applied', generation: 1 }),
    ]);
    expect(p.plane.revocationStatus()).toEqual({
      generation: 1,
      nodes: expect.arrayContaining([
        expect.objectContaining({ node_id: a.service.nodeId, generation: 1 }),
        expect.objectContaining({ node_id: b.service.nodeId, generation: 1 }),
      ]),
    });
    // Nothing is pushed again once every host holds it; an older list is refused.
    expect((await p.plane.tick()).revocations_pushed).toEqual([]);
    await expect(p.plane.pushRevocations(RevocationList.empty().toJSON())).rejects.toMatchObject({
      code: 'invalid_input',
      field: 'list.generation',
    });
    // A revoked instance is never rescheduled.
    expect(p.plane.reschedules()).toEqual([]);
  });
});

describe('review: no second copy', () => {
  it('a controller killed while a reschedule place is out settles that decision at its next start, never places it again elsewhere', async () => {
    const clock = new Clock();
    const x = await host(['wasi']);
    const y = await host(['wasi']);
    const z = await host(['wasi']);
    const dir = tempDir();
    const first = await plane(clock, dir);
    for (const h of [x, y, z]) await first.plane.addNode(h.url, { tier: 'paired' });
    const r = await placeOn(first, x.service.nodeId);
    const a = [x, y, z].find((h) => h.service.nodeId === r.instance?.node_id) as TestHost;
    const [b, c] = [x, y, z].filter((h) => h !== a) as [TestHost, TestHost];
    const id = r.instance?.instance_id as string;
    // c is away: the reschedule goes to b, which places it; the controller dies before the answer
    // is recorded (its store is gone, as after kill -9).
    await c.server.close();
    b.intercept((real) => async (signed, ctx) => {
      const answer = await real(signed, ctx);
      if ((JSON.parse(signed.payload) as { method: string }).method === 'workload.place') {
        first.store.close();
        throw new Error('the controller died');
      }
      return answer;
    });
    await a.server.close();
    await first.plane.tick();
    clock.advance(TUNABLES.deadAfterMs + 100);
    await expect(first.plane.tick()).rejects.toThrow();
    expect(b.service.instanceIds()).toHaveLength(1);
    await closePlane(first);

    // At the restart b cannot be asked yet and c is back: the reschedule must wait for its decision.
    b.intercept(undefined);
    await b.server.close();
    await c.restart();
    const second = await plane(clock, dir);
    clock.advance(10);
    const t = await second.plane.tick();
    expect(t.rescheduled).toEqual([]);
    expect(c.service.instanceIds()).toEqual([]);
    expect(second.plane.reschedules()).toEqual([
      expect.objectContaining({ instance_id: id, decision_id: expect.stringMatching(/^[0-9a-f]{64}$/) }),
    ]);

    // b answers again: settling records its instance, and the reschedule finishes with it.
    await b.restart();
    clock.advance(10);
    await second.plane.tick();
    clock.advance(10);
    await second.plane.tick();
    const replacement = b.service.instanceIds()[0] as string;
    expect(second.plane.instance(id).state).toBe('rescheduled');
    expect(second.plane.instance(replacement)).toMatchObject({ replaces: id, desired_running: true });
    expect(c.service.instanceIds()).toEqual([]);
    expect(second.plane.reschedules()).toEqual([]);
  });

  it('an orphan whose node takes a replacement under the same id in the same tick is not unloaded', async () => {
    const { clock, p, r, a, b } = await placedOnOneOfTwo();
    const id = r.instance?.instance_id as string;
    const t = await killAndDeclareDead(p, clock, a);
    const replacement = t.rescheduled[0]?.replaced_by as string;
    expect(p.plane.instance(replacement).node_id).toBe(b.service.nodeId);
    // b goes away; a comes back (still holding the orphan) in the tick that declares b dead: the
    // replacement's replacement lands on a under the orphan's own (derived) id.
    await b.server.close();
    clock.advance(10);
    await p.plane.tick();
    await a.restart();
    clock.advance(TUNABLES.deadAfterMs + 100);
    const back = await p.plane.tick();
    expect(back.dead).toEqual([b.service.nodeId]);
    expect(back.rescheduled).toEqual([
      { instance_id: replacement, replaced_by: id, node_id: a.service.nodeId },
    ]);
    expect(back.orphans_unloaded).toEqual([]);
    expect(a.service.instanceIds()).toEqual([id]);
    expect(p.plane.instance(id)).toMatchObject({
      state: 'running',
      replaces: replacement,
      desired_running: true,
    });
  });
});

describe('review: crash safety', () => {
  it('a controller killed right after marking an instance lost still replaces it at its next start', async () => {
    const dir = tempDir();
    const { clock, p: first, r, a, b } = await placedOnOneOfTwo(dir);
    const id = r.instance?.instance_id as string;
    // The process dies while it chains the move to lost (as kill -9 would: nothing more is written).
    const append = first.chain.append.bind(first.chain);
    first.chain.append = (async (...args: Parameters<typeof append>) => {
      const payload = args[2] as { to?: string };
      if (args[1] === 'workload.lifecycle' && payload.to === 'lost') {
        first.store.close();
        throw new Error('the controller died');
      }
      return append(...args);
    }) as typeof append;
    await a.server.close();
    await first.plane.tick();
    clock.advance(TUNABLES.deadAfterMs + 100);
    await expect(first.plane.tick()).rejects.toThrow();
    await closePlane(first);

    const second = await plane(clock, dir);
    expect(second.plane.instance(id).state).toBe('lost');
    clock.advance(10);
    const t = await second.plane.tick();
    expect(t.rescheduled).toEqual([
      { instance_id: id, replaced_by: expect.any(String), node_id: b.service.nodeId },
    ]);
    expect(second.plane.instance(id).state).toBe('rescheduled');
  });
});

describe('review: a dead node that answers again', () => {
  it('its lost instances are not replaced while its listing cannot be read; adopted back once it can', async () => {
    const { clock, p, r, a, b } = await placedOnOneOfTwo();
    const id = r.instance?.instance_id as string;
    await b.server.close(); // nowhere to go: the reschedule waits
    const t = await killAndDeclareDead(p, clock, a);
    expect(t.lost).toEqual([id]);
    expect(t.waiting).toHaveLength(1);
    // a answers its describe again (it still runs the instance), but its listing is lost; b is back.
    a.intercept((real) => async (signed, ctx) => {
      if (signed.payload.includes('include_departed')) throw new Error('the listing was lost');
      return real(signed, ctx);
    });
    await a.restart();
    await b.restart();
    clock.advance(TUNABLES.rescheduleBackoffMaxMs + 10);
    const held = await p.plane.tick();
    expect(held.reachable).toContain(a.service.nodeId);
    expect(held.rescheduled).toEqual([]);
    expect(b.service.instanceIds()).toEqual([]);
    a.intercept(undefined);
    clock.advance(10);
    const back = await p.plane.tick();
    expect(back.adopted).toEqual([id]);
    expect(b.service.instanceIds()).toEqual([]);
    expect(p.plane.reschedules()).toEqual([]);
  });

  it('a lost instance its returning node lists in a state it cannot be adopted from is not replaced meanwhile', async () => {
    const { clock, p, r, a, b } = await placedOnOneOfTwo();
    const id = r.instance?.instance_id as string;
    await b.server.close();
    await killAndDeclareDead(p, clock, a);
    // a comes back listing the instance in a transient state (re-signed by a: its real answer, with
    // `life` changed to one that `lost` cannot move to).
    a.intercept((real) => async (signed, ctx) => {
      const answer = await real(signed, ctx);
      if (!signed.payload.includes('include_departed')) return answer;
      const res = JSON.parse(answer.payload) as {
        method: string;
        request_nonce: string;
        outcome: { result: { instances: { instance_id: string; life?: string }[] } };
      };
      const result = res.outcome.result;
      for (const i of result.instances) if (i.instance_id === id) i.life = 'placed';
      return signResponse({ method: res.method, nonce: res.request_nonce }, okOutcome(result), a.keys);
    });
    await a.restart();
    await b.restart();
    clock.advance(TUNABLES.rescheduleBackoffMaxMs + 10);
    const held = await p.plane.tick();
    expect(held.errors).toEqual([]);
    expect(held.adopted).toEqual([]);
    expect(held.rescheduled).toEqual([]);
    expect(b.service.instanceIds()).toEqual([]);
    a.intercept(undefined);
    clock.advance(10);
    expect((await p.plane.tick()).adopted).toEqual([id]);
    expect(b.service.instanceIds()).toEqual([]);
  });
});
