// The live engine view (kept in memory from node events) agrees with the view rebuilt from the store
// after any sequence of node events and places, and answers without reading every target.
import { NODE_TIERS, type NodeTier } from '@heddle/model';
import {
  type NodeInput,
  type PlacementRequest,
  PlacementState,
  type PlacementView,
  place,
} from '@heddle/placement';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Caller } from './caller.js';
import { planeConfig } from './config.js';
import { engineView } from './engine-view.js';
import { LiveEngineView } from './live-view.js';
import { NodeBook } from './node-book.js';
import type { NodeDriver } from './node-driver.js';
import { NodeDrivers } from './node-drivers.js';
import { SqliteStateStore } from './sqlite-store.js';
import type { TargetRecord } from './state-store.js';
import { controllerKeys } from './test-fixtures.js';

const DEAD_AFTER = 1_000;
const ROUTES = ['wasi', 'native', 'container'] as const;

/** A driver whose nodes offer `runtime.<route>` per route of their target, and 4 GiB. */
const simDriver: NodeDriver = {
  kind: 'sim',
  viewNode: (book, t, now): NodeInput => ({
    node_id: t.node_id,
    tier: t.tier ?? 'discovered',
    liveness: book.liveness.get(t.node_id, now),
    capabilities: [
      {
        id: 'mem.system',
        attrs: { size_mb: 4096 },
        provenance: 'claimed',
        state: 'available',
        exclusive: false,
      },
      ...t.routes.map((r) => ({
        id: `runtime.${r}`,
        attrs: {},
        provenance: 'claimed' as const,
        state: 'available' as const,
        exclusive: false,
      })),
    ],
  }),
  refresh: async (_ctx, t) => t,
  verb: async () => ({}),
  settle: async () => 'nothing',
};

const target = (i: number, tier: NodeTier | null, routes: readonly string[], now: number): TargetRecord => ({
  kind: 'sim',
  node_id: `n${i.toString(16).padStart(31, '0')}`,
  url: `sim://${i}`,
  public_key: '',
  key_source: 'pinned',
  tier,
  assigned_tier: tier ?? 'paired',
  pending_key: null,
  routes: [...routes],
  facts: null,
  learned_at_ms: now,
  last_seen_ms: now,
  unreachable_since_ms: null,
  last_error: null,
});

type Event =
  | { kind: 'join'; node: number; tier: NodeTier | null; routes: string[] }
  | { kind: 'contact' | 'fail' | 'remove'; node: number }
  | { kind: 'advance'; ms: number }
  | { kind: 'meta'; node: number; cordoned: boolean; zone: string | null }
  | { kind: 'place'; route: string };

const node = fc.integer({ min: 0, max: 11 });
const eventArb: fc.Arbitrary<Event> = fc.oneof(
  fc.record({
    kind: fc.constant('join' as const),
    node,
    tier: fc.oneof(fc.constantFrom(...NODE_TIERS), fc.constant(null)),
    routes: fc.subarray([...ROUTES]),
  }),
  fc.record({ kind: fc.constantFrom('contact' as const, 'fail' as const, 'remove' as const), node }),
  fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 2 * DEAD_AFTER }) }),
  fc.record({ kind: fc.constant('place' as const), route: fc.constantFrom(...ROUTES) }),
  fc.record({
    kind: fc.constant('meta' as const),
    node,
    cordoned: fc.boolean(),
    zone: fc.oneof(fc.constantFrom('a', 'b'), fc.constant(null)),
  }),
);

/** What the engine reads of each node of a view, in order. */
function shape(view: PlacementView) {
  return view.nodes.map((n) => ({
    id: n.node_id,
    tier: n.tier,
    liveness: n.liveness,
    caps: n.caps.map((c) => c.id),
    cordoned: n.cordoned,
    labels: n.labels,
    memory: n.memory_mb,
  }));
}

function request(route: string): PlacementRequest {
  return {
    workload: `w-${route}`,
    variants: [{ name: `v-${route}`, execution: 'native', requirements: [{ id: `runtime.${route}` }] }],
    resources: { memory_mb: 512, cpu_pct: 10 },
  };
}

function open(nowRef: { now: number }) {
  const store = SqliteStateStore.open(':memory:');
  const config = planeConfig({ deadAfterMs: DEAD_AFTER, suspectAfterMs: DEAD_AFTER / 2 });
  const book = new NodeBook(store, new Caller(controllerKeys, config), config, () => nowRef.now);
  const drivers = new NodeDrivers([simDriver]);
  const ctx = { book, store, drivers };
  return { store, book, ctx, live: new LiveEngineView(ctx) };
}

describe('LiveEngineView', () => {
  it('agrees with the view rebuilt from the store after any sequence of node events and places', () => {
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 60 }), (events) => {
        const clock = { now: 1_000_000 };
        const { store, book, ctx, live } = open(clock);
        const state = new PlacementState();
        try {
          for (const e of events) {
            const id = (i: number) => `n${i.toString(16).padStart(31, '0')}`;
            switch (e.kind) {
              case 'join':
                store.putTarget(target(e.node, e.tier, e.routes, clock.now));
                book.liveness.contact(id(e.node), clock.now);
                break;
              case 'contact':
                if (store.getTarget(id(e.node)) !== undefined) book.liveness.contact(id(e.node), clock.now);
                break;
              case 'fail':
                if (store.getTarget(id(e.node)) !== undefined) book.liveness.failure(id(e.node), clock.now);
                break;
              case 'remove':
                store.removeTarget(id(e.node));
                book.liveness.forget(id(e.node));
                break;
              case 'advance':
                clock.now += e.ms;
                break;
              case 'meta':
                if (e.zone === null && !e.cordoned) store.removeNodeMeta(id(e.node));
                else
                  store.putNodeMeta({
                    node_id: id(e.node),
                    cordoned: e.cordoned,
                    labels: e.zone === null ? {} : { zone: e.zone },
                    updated_at_ms: clock.now,
                  });
                break;
              case 'place': {
                const rebuilt = engineView(ctx, clock.now);
                const a = place(request(e.route), live.view(clock.now), state, { now_ms: clock.now });
                const b = place(request(e.route), rebuilt, state, { now_ms: clock.now });
                expect(a).toEqual(b);
                if (a.outcome === 'placed') state.reserve(a.reservation, rebuilt);
                break;
              }
            }
            expect(shape(live.view(clock.now))).toEqual(shape(engineView(ctx, clock.now)));
          }
        } finally {
          store.close();
        }
      }),
      { numRuns: 150 },
    );
  });

  it('reads only the node an event names, not every target (a place after one event costs one read)', () => {
    const clock = { now: 1_000_000 };
    const { store, book, live } = open(clock);
    for (let i = 0; i < 500; i++) {
      store.putTarget(target(i, 'paired', ['wasi'], clock.now));
      book.liveness.contact(target(i, null, [], 0).node_id, clock.now);
    }
    const first = live.view(clock.now);
    expect(live.stats.loads).toBe(1);
    // A view asked again with no event in between is the same object: nothing read, nothing built.
    expect(live.view(clock.now)).toBe(first);
    let listed = 0;
    const list = store.listTargets.bind(store);
    store.listTargets = () => {
      listed++;
      return list();
    };
    // A liveness change and a tier change are patched in place.
    book.liveness.failure(target(7, null, [], 0).node_id, clock.now);
    store.putTarget(target(8, 'pinned', ['wasi'], clock.now));
    const next = live.view(clock.now);
    expect(next).toBe(first);
    expect(next.get(target(7, null, [], 0).node_id)?.liveness).toBe('suspect');
    expect(next.get(target(8, null, [], 0).node_id)?.tier).toBe('pinned');
    // Time alone turns the failing node dead.
    expect(live.view(clock.now + DEAD_AFTER).get(target(7, null, [], 0).node_id)?.liveness).toBe('dead');
    // A join rebuilds once, from memory.
    store.putTarget(target(900, 'paired', ['native'], clock.now));
    expect(live.view(clock.now + DEAD_AFTER).size).toBe(501);
    expect(listed).toBe(0);
    expect(live.stats).toMatchObject({ loads: 1, rebuilt: 2, patched: 3, recomputed: 4 });
    store.close();
  });
});
