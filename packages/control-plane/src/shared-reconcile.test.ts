import { type Chain, verifyCrossReferences } from '@heddle/chain';
import { type KeyPair, keyPairFromSecret } from '@heddle/envelope';
import { AllowListPolicy } from '@heddle/protocol';
import { describe, expect, it } from 'vitest';
import { ofThisState } from './host-listing.js';
import type { PlaceResult } from './place.js';
import { type SharedPlane, useSharedPostgres } from './shared-planes.test-util.js';
import { examplePackage, startHost, type TestHost } from './test-fixtures.js';
import { controllerKeys } from './test-plane.js';

// Two controllers (two keys, two homes, two chains) sharing one PostgreSQL state, and real hosts that
// enrol both keys. Controller A places; controller B, the one that ticks (the leader), reconciles
// what the hosts list of A's instances exactly like its own: a loss is recorded and the instance placed
// again, an orphan A's instance left behind on a returning node is unloaded, a state the host reports
// is recorded; each of these is chained by B with a cross-reference to A's placement decision.

const sp = useSharedPostgres('peers');
const skip = sp.skip;
/** Controller B's key (A has the test plane's usual key). */
const peerKeys: KeyPair = keyPairFromSecret(new Uint8Array(32).fill(0x91));

const TUNABLES = {
  deadAfterMs: 1_000,
  suspectAfterMs: 500,
  rescheduleBackoffMs: 1_000,
  rescheduleBackoffMaxMs: 4_000,
  rescheduleTimeoutMs: 10_000,
  reconcileTimeoutMs: 3_000,
  callTimeoutMs: 5_000,
};

/** Real time plus an offset the test moves forward (under the protocol's 30 s skew). */
class Clock {
  offset = 0;
  readonly now = (): number => Date.now() + this.offset;
  advance(ms: number): void {
    this.offset += ms;
  }
}

const planeOn = (url: string, keys: KeyPair, clock: Clock): Promise<SharedPlane> =>
  sp.planeOn(url, { keys, config: TUNABLES, now: clock.now });

/** A WASI host that enrols both controllers' keys. */
async function host(seed?: number, port = 0): Promise<TestHost> {
  const h = await startHost(['wasi'], seed, port, {
    controllers: new AllowListPolicy({ publicKeys: [controllerKeys.publicKey, peerKeys.publicKey] }),
  });
  sp.track(h);
  return h;
}

/** Controller A, controller B (the one that ticks) and two hosts both know. */
async function fleet(): Promise<{ clock: Clock; a: SharedPlane; b: SharedPlane; x: TestHost; y: TestHost }> {
  const url = await sp.database();
  const clock = new Clock();
  const x = await host();
  const y = await host();
  const a = await planeOn(url, controllerKeys, clock);
  await a.plane.addNode(x.url, { tier: 'paired' });
  await a.plane.addNode(y.url, { tier: 'paired' });
  const b = await planeOn(url, peerKeys, clock);
  return { clock, a, b, x, y };
}

/**
 * A continuous WASI instance placed by A on `node` (preferred). B verifies the same package (a dry
 * run): a controller places again only a package it holds itself.
 */
async function placeThroughA(
  a: SharedPlane,
  b: SharedPlane,
  node: string,
  mode: { type: 'interval'; secs: number } | { type: 'once' } = { type: 'interval', secs: 60 },
): Promise<PlaceResult> {
  const dir = await examplePackage('wasi-cog', false, true);
  await b.plane.refreshNodes();
  await b.plane.place({ package_dir: dir, mode, dry_run: true });
  await a.plane.refreshNodes();
  return a.plane.place({ package_dir: dir, mode, start: true, prefer: [node] });
}

/** The `refers_to` entries of `chain`'s events about `instanceId`, by event kind. */
function crossRefsAbout(chain: Chain, instanceId: string): { kind: string; event: string }[] {
  return chain.range(0).flatMap((e) => {
    // cast: a chained payload is a JSON object; only its refers_to and instance id are read
    const p = e.payload as {
      instance_id?: unknown;
      reschedule_of?: unknown;
      body?: { instance_id?: unknown };
      refers_to?: unknown;
    };
    const about =
      p.instance_id === instanceId || p.reschedule_of === instanceId || p.body?.instance_id === instanceId;
    if (!about || !Array.isArray(p.refers_to)) return [];
    // cast: refers_to entries are {controller, event, kind} (cross-ref.ts)
    return (p.refers_to as { event: string }[]).map((r) => ({ kind: e.kind, event: r.event }));
  });
}

describe('which listed instances a controller reconciles', () => {
  const decision = 'd'.repeat(64);
  it('its own, any of its state (the host names the placement decision), not another deployment’s', () => {
    expect(
      ofThisState('me', { decision_id: decision }, { requester: 'me', decision_id: 'e'.repeat(64) }),
    ).toBe(true);
    expect(ofThisState('me', { decision_id: decision }, { requester: 'peer', decision_id: decision })).toBe(
      true,
    );
    expect(ofThisState('me', { decision_id: decision }, { requester: null, decision_id: null })).toBe(true);
    expect(
      ofThisState('me', { decision_id: decision }, { requester: 'other', decision_id: 'e'.repeat(64) }),
    ).toBe(false);
    expect(ofThisState('me', { decision_id: decision }, { requester: 'other', decision_id: null })).toBe(
      false,
    );
  });
});

describe.skipIf(skip !== undefined)(
  'the leader reconciles the instances another controller placed (PostgreSQL)',
  () => {
    it('A places; its node dies: B records it lost and places it again elsewhere; the node comes back and B unloads the orphan (one instance on the hosts)', async () => {
      const { clock, a, b, x, y } = await fleet();
      const r = await placeThroughA(a, b, x.service.nodeId);
      const old = r.instance?.instance_id as string;
      const [gone, other] = r.instance?.node_id === x.service.nodeId ? [x, y] : [y, x];
      clock.advance(10);
      expect(await b.plane.tick()).toMatchObject({ lost: [], rescheduled: [], errors: [] });

      await gone.server.close();
      expect((await b.plane.tick()).dead).toEqual([]);
      clock.advance(TUNABLES.deadAfterMs + 100);
      const t = await b.plane.tick();
      expect(t.dead).toEqual([gone.service.nodeId]);
      expect(t.lost).toEqual([old]);
      expect(t.rescheduled).toEqual([
        { instance_id: old, replaced_by: expect.any(String), node_id: other.service.nodeId },
      ]);
      const replacement = t.rescheduled[0]?.replaced_by as string;
      expect(other.service.instanceIds()).toEqual([replacement]);

      // The node comes back still holding A's instance, now an orphan: B stops and unloads it.
      expect(gone.service.instanceIds()).toEqual([old]);
      await gone.restart();
      clock.advance(10);
      const back = await b.plane.tick();
      expect(back.orphans_unloaded).toEqual([old]);
      expect(back.errors).toEqual([]);
      // Counted on the hosts: one instance of the order, the replacement.
      expect(gone.service.instanceIds()).toEqual([]);
      expect(other.service.instanceIds()).toEqual([replacement]);
      expect(a.plane.instance(old).state).toBe('unloaded');
      // B chained the loss, the reschedule and the unload, each naming A's placement decision.
      const refs = crossRefsAbout(b.chain, old);
      expect(refs.every((x) => x.event === r.decision_id)).toBe(true);
      expect(new Set(refs.map((x) => x.kind))).toEqual(
        new Set(['workload.lifecycle', 'workload.stop', 'workload.unload', 'workload.place']),
      );
      const cross = verifyCrossReferences([
        { name: 'a', events: a.chain.range(0) },
        { name: 'b', events: b.chain.range(0) },
      ]);
      expect(cross).toMatchObject({ ok: true, failures: [], unresolved: [] });
      expect(cross.resolved).toBeGreaterThanOrEqual(refs.length);
    });

    it('a state the host reports of an instance A placed (a once run that finished) is recorded by B', async () => {
      const { clock, a, b, x } = await fleet();
      const r = await placeThroughA(a, b, x.service.nodeId, { type: 'once' });
      const id = r.instance?.instance_id as string;
      // Wait until the host says the run finished (its own chain), without asking through A.
      const finished = (): boolean =>
        x.chain.find({ kind: 'workload.lifecycle' }).some((e) => {
          // cast: a host lifecycle payload names the instance and the state reached
          const p = e.payload as { instance_id: string; to: string };
          return p.instance_id === id && p.to === 'finished';
        });
      for (let i = 0; i < 200 && !finished(); i++) await new Promise((res) => setTimeout(res, 25));
      expect(finished()).toBe(true);
      expect(a.plane.instance(id).state).not.toBe('finished');
      clock.advance(10);
      const t = await b.plane.tick();
      expect(t.errors).toEqual([]);
      expect(b.plane.instance(id).state).toBe('finished');
      expect(crossRefsAbout(b.chain, id)).toContainEqual({
        kind: 'workload.lifecycle',
        event: r.decision_id,
      });
    });
  },
);
