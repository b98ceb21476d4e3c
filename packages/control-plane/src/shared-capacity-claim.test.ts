import { type NodeInput, PlacementView } from '@heddle/placement';
import { afterEach, describe, expect, it } from 'vitest';
import { planeConfig } from './config.js';
import { idempotencyClaimHoldMs } from './idempotency.js';
import type { PlaneContext } from './plane-context.js';
import { Reservations } from './reservations.js';
import { claimShared, noRoom } from './shared-capacity.js';
import { SqliteStateStore } from './sqlite-store.js';

// claimShared on a real (SQLite) store: the in-memory reservation and the shared row move, fail and
// release together; a node another controller filled (its rows written straight into the store) is
// refused by the shared check although this controller's reservations see it empty.

const stores: SqliteStateStore[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});

const node = (id: string, memoryMb: number, cores = 1): NodeInput => ({
  node_id: id,
  tier: 'paired',
  liveness: 'alive',
  capabilities: [
    {
      id: 'mem.system',
      attrs: { size_mb: memoryMb },
      provenance: 'claimed',
      state: 'available',
      exclusive: false,
    },
    { id: 'cpu.arch.x86_64', attrs: { cores }, provenance: 'claimed', state: 'available', exclusive: false },
  ],
});

const NOW = 1_000_000_000;

/** Just what claimShared reads of a plane's context. */
function context(): { ctx: PlaneContext; store: SqliteStateStore; reservations: Reservations } {
  const store = SqliteStateStore.open(':memory:');
  stores.push(store);
  const reservations = new Reservations();
  // cast: claimShared uses only the store, the clock, the config, the node id and the reservations
  const ctx = {
    store,
    reservations,
    now: () => NOW,
    config: planeConfig(),
    nodeId: 'ctl-self',
  } as unknown as PlaneContext;
  return { ctx, store, reservations };
}

const spec = { order_id: 'o-1', identity: 'id-1', workload: 'w', package_id: 'p', memoryMb: 60, cpuPct: 10 };
const view = PlacementView.create([node('n1', 100), node('n2', 100), node('n3', 100)]);

/** A claim of another controller (written as its own transaction would). */
const peerClaim = (store: SqliteStateStore, nodeId: string, at: number): void =>
  store.putPlaceClaim({
    claim_id: `pc-peer-${nodeId}`,
    node_id: nodeId,
    order_id: 'o-peer',
    instance_id: 'i-peer',
    ram_mb: 60,
    cpu_pct: 10,
    claimed_by: 'ctl-peer',
    claimed_at_ms: at,
  });

describe('claimShared (SQLite)', () => {
  it('claims in memory and in the shared state; moves and releases both', () => {
    const { ctx, store, reservations } = context();
    const claim = claimShared(ctx, { node_id: 'n1', instance_id: 'i-1' }, spec, view);
    if (typeof claim === 'string') throw new Error(claim);
    expect(store.listPlaceClaims()).toMatchObject([
      { node_id: 'n1', ram_mb: 60, cpu_pct: 10, claimed_at_ms: NOW },
    ]);
    expect(claim.claimId).toBe(store.listPlaceClaims()[0]?.claim_id);
    expect(reservations.state.size).toBe(1);
    expect(claim.move({ node_id: 'n2', instance_id: 'i-2' }, view)).toBeUndefined();
    expect(store.listPlaceClaims()).toMatchObject([{ node_id: 'n2', instance_id: 'i-2' }]);
    expect(claim.target).toEqual({ node_id: 'n2', instance_id: 'i-2' });
    claim.release();
    expect(store.listPlaceClaims()).toEqual([]);
    expect(reservations.state.size).toBe(0);
  });

  it("refuses a node another controller's claim filled, holding nothing, though this controller's reservations see it empty", () => {
    const { ctx, store, reservations } = context();
    peerClaim(store, 'n1', NOW - 1_000);
    const why = claimShared(ctx, { node_id: 'n1', instance_id: 'i-1' }, spec, view);
    expect(why).toBe(
      'needs 60 MB, 40 MB free of 100 MB (60 MB held in the shared state by 0 live placement(s), 0 unsettled place(s) and 1 claim(s) of all controllers)',
    );
    expect(reservations.state.size).toBe(0);
    expect(store.listPlaceClaims().map((c) => c.claim_id)).toEqual(['pc-peer-n1']);
  });

  it('a fallback move onto a node filled meanwhile fails and holds nothing anywhere; the next move succeeds', () => {
    const { ctx, store, reservations } = context();
    const claim = claimShared(ctx, { node_id: 'n1', instance_id: 'i-1' }, spec, view);
    if (typeof claim === 'string') throw new Error(claim);
    peerClaim(store, 'n2', NOW);
    expect(claim.move({ node_id: 'n2', instance_id: 'i-2' }, view)).toMatch(
      /^needs 60 MB, 40 MB free of 100 MB/,
    );
    expect(claim.target).toBeUndefined();
    expect(reservations.state.size).toBe(0);
    expect(store.listPlaceClaims().map((c) => c.claim_id)).toEqual(['pc-peer-n2']);
    expect(claim.move({ node_id: 'n3', instance_id: 'i-3' }, view)).toBeUndefined();
    expect(
      store
        .listPlaceClaims()
        .map((c) => c.node_id)
        .sort(),
    ).toEqual(['n2', 'n3']);
  });

  it('counts live placements and unsettled decisions of every controller; ignores and removes lapsed claims', () => {
    const { ctx, store } = context();
    const hold = idempotencyClaimHoldMs(ctx.config);
    peerClaim(store, 'n1', NOW - hold - 1); // lapsed: its controller died before sending
    const claim = claimShared(ctx, { node_id: 'n1', instance_id: 'i-1' }, spec, view);
    if (typeof claim === 'string') throw new Error(claim);
    expect(store.getPlaceClaim('pc-peer-n1')).toBeUndefined();
    claim.release();
    store.putUnsettled({
      decision_id: 'd-peer',
      order_id: 'o-peer',
      node_id: 'n2',
      expected_instance_id: null,
      variant: 'v',
      since_ms: 0, // however old: held until settled
      attempts: 9,
      last_error: 'lost',
      ram_mb: 50,
      cpu_pct: 1,
    });
    expect(claimShared(ctx, { node_id: 'n2', instance_id: 'i-2' }, spec, view)).toMatch(
      /1 unsettled place\(s\)/,
    );
  });

  it('the engine rule: memory only when the place needs some; CPU at 100 per core', () => {
    const empty = { ram_mb: 0, cpu_pct: 0, placements: 0, unsettled: 0, claims: 0, stale_claims: 0 };
    const full = { ...empty, ram_mb: 100, cpu_pct: 100, placements: 1 };
    const cap = { memory_mb: 100, cpu_capacity: 200 };
    expect(noRoom(empty, { ram_mb: 100, cpu_pct: 200 }, cap)).toBeUndefined();
    expect(noRoom(full, { ram_mb: 0, cpu_pct: 100 }, cap)).toBeUndefined();
    expect(noRoom(full, { ram_mb: 1, cpu_pct: 0 }, cap)).toMatch(/^needs 1 MB, 0 MB free of 100 MB/);
    expect(noRoom(full, { ram_mb: 0, cpu_pct: 101 }, cap)).toMatch(/^needs 101% cpu, 100% free of 200%/);
  });
});
