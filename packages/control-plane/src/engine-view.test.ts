import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { toHex } from '@heddle/envelope';
import { type CogBody, NO_REVOCATIONS, TrustAnchors, type VerifiedWorkload } from '@heddle/package';
import type { PlacementView } from '@heddle/placement';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Caller } from './caller.js';
import { planeConfig } from './config.js';
import { engineView } from './engine-view.js';
import { hostDriver } from './host-driver.js';
import { NodeBook } from './node-book.js';
import { NodeDrivers } from './node-drivers.js';
import { PackageStore } from './package-store.js';
import { placeContext } from './place-gate.js';
import { SqliteStateStore } from './sqlite-store.js';
import type { TargetRecord } from './state-store.js';
import {
  controllerKeys,
  examplePackage,
  publisherKeys,
  startHost,
  type TestHost,
  tempDir,
} from './test-fixtures.js';

let both: TestHost;
let wasiOnly: TestHost;
let root: string;
let store: SqliteStateStore;
let book: NodeBook;
let verified: VerifiedWorkload<CogBody>;
const now = Date.now();

beforeAll(async () => {
  [both, wasiOnly] = await Promise.all([startHost(['native', 'wasi']), startHost(['wasi'])]);
  root = tempDir('heddle-cp-view-');
  store = SqliteStateStore.open(join(root, 'state.db'));
  const config = planeConfig({ callTimeoutMs: 5_000 });
  book = new NodeBook(store, new Caller(controllerKeys, config), config, () => now);
  await book.add(both.url, { tier: 'paired' });
  await book.add(wasiOnly.url, { tier: 'pinned' });
  const packages = new PackageStore({
    dir: join(root, 'packages'),
    anchors: new TrustAnchors([
      { id: 'publisher', role: 'publisher', publicKey: toHex(publisherKeys.publicKey) },
    ]),
    revocations: NO_REVOCATIONS,
  });
  verified = await packages.add(await examplePackage('wasi-cog'));
});
afterAll(async () => {
  store.close();
  await Promise.all([both.close(), wasiOnly.close()]);
  rmSync(root, { recursive: true, force: true });
});

const vctx = () => ({ book, store, drivers: new NodeDrivers([hostDriver]) });
const capsOf = (view: PlacementView, nodeId: string): string[] =>
  (view.get(nodeId)?.caps ?? []).map((c) => c.id);

describe('engineView', () => {
  it('has every known node with its tier, liveness and the runtimes of its advertised routes', () => {
    const view = engineView(vctx(), now);
    expect(view.size).toBe(2);
    const a = view.get(both.service.nodeId);
    expect(a).toMatchObject({ tier: 'paired', liveness: 'alive' });
    expect(capsOf(view, both.service.nodeId)).toEqual(
      expect.arrayContaining(['runtime.native', 'runtime.wasi']),
    );
    expect(view.get(wasiOnly.service.nodeId)).toMatchObject({ tier: 'pinned', liveness: 'alive' });
    expect(capsOf(view, wasiOnly.service.nodeId)).toContain('runtime.wasi');
    expect(capsOf(view, wasiOnly.service.nodeId)).not.toContain('runtime.native');
    expect(a?.expires_at_ms).toBe(book.cache.get(both.service.nodeId)?.expires_at_ms);
  });

  it('hides runtime.<route> of a route the node no longer advertises, keeping its other capabilities', () => {
    const id = both.service.nodeId;
    const t = store.getTarget(id) as TargetRecord;
    const held = (book.cache.get(id)?.capabilities ?? []).map((c) => c.id);
    expect(held).toContain('runtime.native');
    try {
      store.putTarget({ ...t, routes: ['wasi'] });
      const caps = capsOf(engineView(vctx(), now), id);
      expect(caps).not.toContain('runtime.native');
      expect(caps).toContain('runtime.wasi');
      expect(caps).toEqual(held.filter((c) => c !== 'runtime.native'));
      store.putTarget({ ...t, routes: [] });
      expect(capsOf(engineView(vctx(), now), id).filter((c) => c.startsWith('runtime.'))).toEqual([]);
    } finally {
      store.putTarget(t);
    }
  });

  it('leaves out a node without a tier and one whose facts are not held', () => {
    const id = both.service.nodeId;
    const t = store.getTarget(id) as TargetRecord;
    try {
      store.putTarget({ ...t, tier: null });
      const view = engineView(vctx(), now);
      expect(view.get(id)).toBeUndefined();
      expect(view.size).toBe(1);
    } finally {
      store.putTarget(t);
    }
    store.putTarget({ ...t, node_id: 'e'.repeat(32), url: 'ws://127.0.0.1:1/' });
    try {
      expect(engineView(vctx(), now).get('e'.repeat(32))).toBeUndefined();
      expect(engineView(vctx(), now).size).toBe(2);
    } finally {
      store.removeTarget('e'.repeat(32));
    }
  });

  it('reports the liveness of its checks: silence it did not ask about does not count, failures do', () => {
    const cfg = planeConfig();
    const later = engineView(vctx(), now + cfg.deadAfterMs + 1);
    expect(later.get(both.service.nodeId)?.liveness).toBe('alive');
    book.liveness.failure(both.service.nodeId, now + 1);
    try {
      expect(engineView(vctx(), now + 2).get(both.service.nodeId)?.liveness).toBe('suspect');
      const dead = engineView(vctx(), now + cfg.deadAfterMs + 1);
      expect(dead.get(both.service.nodeId)?.liveness).toBe('dead');
    } finally {
      book.liveness.contact(both.service.nodeId, now + 2);
    }
  });
});

describe('placeContext', () => {
  it('gives the network of the route: native egress, wasi and container none, unknown egress', () => {
    const node = { tier: 'paired', memory_mb: 1024 } as const;
    expect(placeContext(verified, 'x86_64-native', node, false).network).toBe('egress');
    expect(placeContext(verified, 'wasm32-wasi', node, false).network).toBe('none');
    expect(placeContext(verified, 'x86_64-container', node, false).network).toBe('none');
    expect(placeContext(verified, 'x86_64-other', node, false).network).toBe('egress');
  });

  it('takes a variant name that does not parse as the most exposed, not by what follows its last dash', () => {
    const node = { tier: 'paired', memory_mb: 1024 } as const;
    // Neither is a variant of the package: an unknown arch, and a route that does not go with its arch.
    expect(placeContext(verified, 'mips-wasi', node, false).network).toBe('egress');
    expect(placeContext(verified, 'x86_64-wasi', node, false).network).toBe('egress');
  });

  it('costs the cog memory over the node memory, at most 1 (1024 MB assumed when unknown)', () => {
    const ram = verified.body.resources.ram_mb;
    expect(ram).toBe(4);
    expect(placeContext(verified, 'wasm32-wasi', { tier: 'paired', memory_mb: 8 }, false).resource_cost).toBe(
      0.5,
    );
    expect(placeContext(verified, 'wasm32-wasi', { tier: 'paired', memory_mb: 2 }, false).resource_cost).toBe(
      1,
    );
    expect(placeContext(verified, 'wasm32-wasi', { tier: 'paired', memory_mb: 4 }, false).resource_cost).toBe(
      1,
    );
    expect(
      placeContext(verified, 'wasm32-wasi', { tier: 'paired', memory_mb: -1 }, false).resource_cost,
    ).toBe(4 / 1024);
    expect(placeContext(verified, 'wasm32-wasi', { tier: 'paired', memory_mb: 0 }, false).resource_cost).toBe(
      4 / 1024,
    );
  });

  it('names the package as the controller verified it: pinned signer, its id, keys and artifacts', () => {
    const c = placeContext(verified, 'wasm32-wasi', { tier: 'pinned', memory_mb: 4096 }, true);
    expect(c).toEqual({
      kind: 'cog',
      package_trust: 'pinned_signer',
      node_tier: 'pinned',
      network: 'none',
      secrets: false,
      emulated: true,
      resource_cost: 4 / 4096,
      package_id: verified.packageId,
      signer_keys: [toHex(publisherKeys.publicKey)],
      artifact_hashes: [...verified.artifactHashes],
    });
    expect(c.signer_keys).not.toBe(verified.signerKeys);
  });

  it('uses the memory of a real node from the engine view', () => {
    const node = engineView(vctx(), now).get(both.service.nodeId);
    expect(node).toBeDefined();
    if (node === undefined) return;
    const c = placeContext(verified, 'wasm32-wasi', node, false);
    expect(c.node_tier).toBe('paired');
    expect(c.resource_cost).toBe(Math.min(1, 4 / (node.memory_mb > 0 ? node.memory_mb : 1024)));
  });
});
