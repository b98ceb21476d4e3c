import { RevocationList } from '@heddle/package';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStateStore } from './pg-store.js';
import type { NodeMetaRecord, SharedStateChange } from './state-store.js';
import { operatorKeys } from './test-plane.js';
import { postgresSkipReason, startPostgres, type TestPostgres } from './test-postgres.js';

// The store's announcements of shared writes (docs/state.md, "Several controllers: what each one sees
// of the others' writes"), between two stores on one real PostgreSQL database: a committed write of a
// node record is told to the other store and not to the writer; a rolled-back one is told to nobody;
// many at once become one re-read; a removal still answers whether it removed anything.

const skip = postgresSkipReason();
let pg: TestPostgres | undefined;
let dbs = 0;
beforeAll(async () => {
  if (skip === undefined) pg = await startPostgres();
}, 120_000);
afterAll(async () => {
  await pg?.stop();
});

const stores: PostgresStateStore[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});

const meta = (nodeId: string): NodeMetaRecord => ({
  node_id: nodeId,
  cordoned: true,
  labels: { room: 'hall' },
  updated_at_ms: 1,
});

/** Two stores on a fresh database, each recording what it is told (after its first re-read). */
async function pair(): Promise<{
  a: PostgresStateStore;
  b: PostgresStateStore;
  told: SharedStateChange[][];
}> {
  if (pg === undefined) throw new Error('no test server');
  const url = await pg.createDatabase(`notify_${dbs++}`);
  const a = PostgresStateStore.open(url, { resyncMs: 0 });
  const b = PostgresStateStore.open(url, { resyncMs: 0 });
  stores.push(a, b);
  const told: SharedStateChange[][] = [[], []];
  a.watchShared((c) => told[0]?.push(c));
  b.watchShared((c) => told[1]?.push(c));
  await until(() => told.every((t) => t.some((c) => c.kind === 'resync')));
  told[0] = [];
  told[1] = [];
  return { a, b, told };
}

async function until(ok: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error('not seen in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe.skipIf(skip !== undefined)('PostgresStateStore.watchShared (a real PostgreSQL server)', () => {
  it('a committed write is told to the other store, not to the writer; a rolled-back one to nobody', async () => {
    const { a, b, told } = await pair();
    expect(() =>
      a.transaction(() => {
        a.putNodeMeta(meta('n1'));
        throw new Error('no');
      }),
    ).toThrow('no');
    a.transaction(() => a.putNodeMeta(meta('n2')));
    const list = RevocationList.empty().add(
      { kind: 'package', ref: 'ab'.repeat(32), revokedAtMs: Date.now(), reason: 'test' },
      operatorKeys,
    );
    a.putRevocationList({
      name: 'current',
      generation: list.generation,
      list: list.toJSON(),
      stored_at_ms: 1,
    });
    await until(() => (told[1]?.length ?? 0) >= 2);
    await new Promise((r) => setTimeout(r, 200)); // anything else would have arrived by now
    expect(told[1]).toEqual([{ kind: 'meta', node_id: 'n2' }, { kind: 'revocations' }]);
    expect(told[0]).toEqual([]);
    expect(b.getNodeMeta('n1')).toBeUndefined();
    expect(b.sharedStatus()).toMatchObject({ watching: true, listening: true, connects: 1, notices: 2 });
  });

  it('a removal answers whether it removed anything, and is told; many writes at once are one re-read', async () => {
    const { a, b, told } = await pair();
    b.putNodeMeta(meta('n3'));
    await until(() => (told[0]?.length ?? 0) >= 1);
    expect(a.removeNodeMeta('n3')).toBe(true);
    expect(a.removeNodeMeta('n3')).toBe(false);
    await until(() => (told[1]?.length ?? 0) >= 1);
    expect(told[1]?.[0]).toEqual({ kind: 'meta', node_id: 'n3' });
    told[1] = [];
    a.transaction(() => {
      for (let i = 0; i < 100; i++) a.putNodeMeta(meta(`m${i}`));
    });
    await until(() => (told[1]?.length ?? 0) >= 1);
    await new Promise((r) => setTimeout(r, 200));
    expect(told[1]).toEqual([{ kind: 'resync', why: '100 changes at once' }]);
  });

  it('closing the store ends its listener', async () => {
    const { a } = await pair();
    a.close();
    expect(a.sharedStatus()).toMatchObject({ watching: false, listening: false });
  });
});
