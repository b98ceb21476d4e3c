import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { toHex } from '@heddle/envelope';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Caller } from './caller.js';
import { planeConfig } from './config.js';
import { NodeBook } from './node-book.js';
import { nodeView } from './node-view.js';
import { SqliteStateStore } from './sqlite-store.js';
import type { PlacementRecord, PlacementState, TargetRecord } from './state-store.js';
import { controllerKeys, startHost, type TestHost, tempDir } from './test-fixtures.js';

let host: TestHost;
let root: string;
let store: SqliteStateStore;
let book: NodeBook;
let target: TargetRecord;
let now = 1_000_000;
const config = planeConfig({ callTimeoutMs: 5_000 });

beforeAll(async () => {
  host = await startHost(['native', 'wasi']);
  root = tempDir('heddle-cp-nodeview-');
  store = SqliteStateStore.open(join(root, 'state.db'));
  now = Date.now();
  book = new NodeBook(store, new Caller(controllerKeys, config), config, () => now);
  target = await book.add(host.url, { tier: 'paired' });
});
afterAll(async () => {
  store.close();
  await host.close();
  rmSync(root, { recursive: true, force: true });
});

const placement = (id: string, nodeId: string, state: PlacementState): PlacementRecord => ({
  instance_id: id,
  node_id: nodeId,
  order_id: 'o-0000000000000001',
  decision_id: 'd'.repeat(64),
  workload: 'hello',
  version: '1.0.0',
  variant: 'wasm32-wasi',
  runtime: 'wasi',
  manifest_hash: 'c'.repeat(64),
  package_id: 'pkg-1',
  signer_keys: ['e'.repeat(64)],
  artifact_hashes: ['f'.repeat(64)],
  state,
  desired_running: state === 'running',
  placed_at_ms: 100,
  updated_at_ms: 100,
});

describe('nodeView', () => {
  it('shows a learned node: key, tier, routes, capabilities, facts expiry, alive', () => {
    const v = nodeView(target, book, store, now);
    expect(v).toMatchObject({
      node_id: host.service.nodeId,
      url: host.url,
      public_key: toHex(host.keys.publicKey),
      key_source: 'tofu',
      tier: 'paired',
      assigned_tier: 'paired',
      pending_key: null,
      liveness: 'alive',
      routes: ['native', 'wasi'],
      last_seen_ms: now,
      unreachable_since_ms: null,
      last_error: null,
      instances: 0,
    });
    expect(v.capabilities).toEqual(expect.arrayContaining(['runtime.native', 'runtime.wasi']));
    expect(v.facts_expire_at_ms).toBe(book.cache.get(host.service.nodeId)?.expires_at_ms);
    expect(v.facts_expire_at_ms).toBeGreaterThan(now);
  });

  it('counts the placements on the node that are neither unloaded nor lost', () => {
    const id = host.service.nodeId;
    const states: PlacementState[] = [
      'placed',
      'running',
      'stopped',
      'failed',
      'lost',
      'unloaded',
      'unloaded',
    ];
    states.forEach((s, i) => {
      store.putPlacement(placement(`i-${i}`, id, s));
    });
    store.putPlacement(placement('i-elsewhere', 'a'.repeat(32), 'running'));
    try {
      expect(nodeView(target, book, store, now).instances).toBe(4);
      store.putPlacement(placement('i-0', id, 'unloaded'));
      expect(nodeView(target, book, store, now).instances).toBe(3);
    } finally {
      for (const p of store.listPlacements()) store.removePlacement(p.instance_id);
    }
    expect(nodeView(target, book, store, now).instances).toBe(0);
  });

  it('reports liveness from its checks only: silence the controller did not ask about is not suspicion', () => {
    expect(nodeView(target, book, store, now + config.suspectAfterMs + 1).liveness).toBe('alive');
    expect(nodeView(target, book, store, now + config.deadAfterMs + 1).liveness).toBe('alive');
  });

  it('reports a node that stopped answering as unreachable, with the reason', async () => {
    const other = await startHost(['wasi']);
    try {
      const t = await book.add(other.url, { tier: 'discovered' });
      expect(nodeView(t, book, store, now).liveness).toBe('alive');
      await other.server.close();
      const later = now + 1000;
      now = later;
      const r = await book.refresh(t.node_id);
      const v = nodeView(r, book, store, later);
      expect(v.liveness).toBe('suspect');
      expect(v.unreachable_since_ms).toBe(later);
      expect(v.last_error).toEqual(expect.any(String));
      expect(nodeView(r, book, store, later + config.deadAfterMs + 1).liveness).toBe('dead');
    } finally {
      now -= 1000;
      book.remove(other.service.nodeId, true);
      await other.close();
    }
  });

  it('hides runtimes of routes the node does not advertise', () => {
    const v = nodeView({ ...target, routes: ['wasi'] }, book, store, now);
    expect(v.routes).toEqual(['wasi']);
    expect(v.capabilities).toContain('runtime.wasi');
    expect(v.capabilities).not.toContain('runtime.native');
    const none = nodeView({ ...target, routes: [] }, book, store, now);
    expect(none.capabilities.filter((c) => c.startsWith('runtime.'))).toEqual([]);
  });

  it('shows a node it holds no facts or contact for: no capabilities, no expiry, liveness unknown', () => {
    const stranger: TargetRecord = { ...target, node_id: 'b'.repeat(32), url: 'ws://127.0.0.1:1/' };
    const v = nodeView(stranger, book, store, now);
    expect(v).toMatchObject({
      capabilities: [],
      facts_expire_at_ms: null,
      liveness: 'unknown',
      instances: 0,
    });
  });
});
