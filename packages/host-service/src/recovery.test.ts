// A host restart in one process: a second HostService on the same data directory (new adapters, new
// holder, the same chain) re-adopts what the first placed, as a restarted daemon would.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { toHex } from '@heddle/envelope';
import { Gate } from '@heddle/gate';
import { RevocationHolder, RevocationList, TrustAnchors } from '@heddle/package';
import { AllowListPolicy } from '@heddle/protocol';
import { hostCogArch, NativeRuntime, processStartTime, WasiRuntime, WorkloadHost } from '@heddle/runtime';
import { WireServer } from '@heddle/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HostService } from './host-service.js';
import { INSTANCES_FILE } from './instance-store.js';
import type { RecoveryReport } from './recovery.js';
import {
  buildPackage,
  call,
  controllerKeys,
  helloSource,
  hostKeys,
  OPEN_POLICY,
  operatorKeys,
  placeBody,
  publisherKeys,
  request,
  startHost,
  type TestHost,
  tempDir,
  wasiPackage,
} from './test-fixtures.js';

const NATIVE = `${hostCogArch() ?? 'x86_64'}-native`;
type Obj = Record<string, unknown>;

let first: TestHost;
let listPath: string;
let second: { service: HostService; server: WireServer; url: string } | undefined;

/**
 * A second host service on `first`'s data directory, as a restarted daemon builds it (trusting the
 * publisher unless `trustPublisher` is false: an operator changed the node's anchors meanwhile).
 */
function restarted(dataDir: string, trustPublisher = true): HostService {
  const holder = new RevocationHolder({ path: listPath, trustedKeys: [toHex(operatorKeys.publicKey)] });
  const gate = new Gate({ policy: OPEN_POLICY, recorder: first.chain, revocations: holder });
  const native = new NativeRuntime({
    stateDir: join(dataDir, 'native'),
    dataRoot: join(dataDir, 'instances'),
    ...(process.getuid?.() === 0 ? { runAsUser: 'nobody' } : { allowHostUser: true }),
  });
  const wasi = new WasiRuntime({ dataRoot: join(dataDir, 'instances') });
  const hosts = [native, wasi].map(
    (runtime) =>
      new WorkloadHost({ runtime, gate, recorder: first.chain, agent: 'host', nodeTier: 'paired' }),
  );
  return new HostService({
    keys: hostKeys,
    controllers: new AllowListPolicy({ publicKeys: [controllerKeys.publicKey] }),
    anchors: new TrustAnchors([
      ...(trustPublisher
        ? [{ id: 'publisher', role: 'publisher' as const, publicKey: toHex(publisherKeys.publicKey) }]
        : []),
      { id: 'operator', role: 'operator', publicKey: toHex(operatorKeys.publicKey) },
    ]),
    revocations: holder,
    routes: hosts,
    recorder: first.chain,
    dataDir,
  });
}

beforeAll(async () => {
  listPath = join(tempDir('heddle-hs-recover-'), 'revocations.json');
  first = await startHost({ revocationPath: listPath });
});
afterAll(async () => {
  if (second !== undefined) {
    await second.service.shutdown(1000).catch(() => undefined);
    await second.server.close();
  }
  await first.close();
});

const place = async (url: string, body: Obj, pkgDir: string): Promise<Obj> =>
  (await call(url, request('workload.place', body as never), { pkgDir })).result as Obj;

describe('HostService.recover', () => {
  it('adopts running and loaded native instances, reports a WASI run lost and a revoked one torn down', async () => {
    const listener = await buildPackage(helloSource());
    const loadedOnly = await buildPackage(helloSource());
    const doomed = await buildPackage(helloSource());
    const wasi = await wasiPackage();
    const a = await place(
      first.url,
      placeBody(listener.manifestHash, NATIVE, { start: true, mode: { type: 'listener' } }),
      listener.dir,
    );
    const b = await place(
      first.url,
      placeBody(loadedOnly.manifestHash, NATIVE, { mode: { type: 'listener' } }),
      loadedOnly.dir,
    );
    const c = await place(
      first.url,
      placeBody(doomed.manifestHash, NATIVE, { start: true, mode: { type: 'listener' } }),
      doomed.dir,
    );
    const w = await place(
      first.url,
      placeBody(wasi.manifestHash, 'wasm32-wasi', { start: true, mode: { type: 'listener' } }),
      wasi.dir,
    );
    const pidA = (a.status as { pid: number }).pid;
    const pidC = (c.status as { pid: number }).pid;
    expect(pidA).toBeGreaterThan(1);
    const stored = JSON.parse(readFileSync(join(first.dataDir, INSTANCES_FILE), 'utf8')) as {
      instances: Obj[];
    };
    expect(stored.instances.map((i) => i.instance_id).sort()).toEqual(
      [a.instance_id, b.instance_id, c.instance_id, w.instance_id].sort(),
    );
    // Revoked while the host was down.
    RevocationList.empty()
      .add({ kind: 'package', ref: c.package_id as string, revokedAtMs: Date.now() }, operatorKeys)
      .save(listPath);

    const service = restarted(first.dataDir);
    const report: RecoveryReport = await service.recover();
    const server = await WireServer.listen({ handler: service.handler });
    second = { service, server, url: server.url };
    expect(report.problem).toBeUndefined();
    expect(report.adopted).toEqual(
      expect.arrayContaining([
        { instance_id: a.instance_id, life: 'running', pid: pidA },
        { instance_id: b.instance_id, life: 'loaded', pid: null },
      ]),
    );
    expect(report.adopted).toHaveLength(2);
    expect(report.lost).toEqual([
      { instance_id: w.instance_id, reason: expect.stringContaining('not adopted') },
    ]);
    expect(report.revoked).toEqual([
      { instance_id: c.instance_id, reason: expect.stringContaining('revoked') },
    ]);
    // The revoked instance's process was taken down.
    expect(processStartTime(pidC)).toBeUndefined();

    const listing = (await call(second.url, request('workload.status', { include_departed: true })))
      .result as {
      instances: Obj[];
      departed: Obj[];
    };
    const viewA = listing.instances.find((i) => i.instance_id === a.instance_id);
    expect(viewA).toMatchObject({ adopted: true, life: 'running', state: 'running', desired_running: true });
    expect((viewA?.status as { pid: number } | undefined)?.pid).toBe(pidA);
    expect(listing.departed).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ instance_id: w.instance_id, reason: 'lost' }),
        expect.objectContaining({ instance_id: c.instance_id, reason: 'revoked' }),
      ]),
    );
    const after = JSON.parse(readFileSync(join(first.dataDir, INSTANCES_FILE), 'utf8')) as {
      instances: Obj[];
    };
    expect(after.instances.map((i) => i.instance_id).sort()).toEqual([a.instance_id, b.instance_id].sort());
    const lifecycle = first.chain
      .range(0)
      .filter((e) => e.kind === 'workload.lifecycle')
      .map((e) => e.payload as Obj);
    expect(lifecycle).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ instance_id: w.instance_id, to: 'lost' }),
        expect.objectContaining({ instance_id: c.instance_id, to: 'revoked' }),
      ]),
    );
    expect(
      first.chain
        .range(0)
        .some((e) => e.kind === 'workload.load' && (e.payload as Obj).phase === 'readopted'),
    ).toBe(true);

    // The adopted instance is controlled through the restarted host: stopped (its process ends) and unloaded.
    const stopped = (
      await call(
        second.url,
        request('workload.stop', { instance_id: a.instance_id as string, grace_ms: 1000 }),
      )
    ).result as Obj;
    expect((stopped.status as Obj).state).toBe('stopped');
    expect(processStartTime(pidA)).toBeUndefined();
    await call(second.url, request('workload.unload', { instance_id: a.instance_id as string }));
    const left = JSON.parse(readFileSync(join(first.dataDir, INSTANCES_FILE), 'utf8')) as {
      instances: Obj[];
    };
    expect(left.instances.map((i) => i.instance_id)).toEqual([b.instance_id]);
  });

  it('stops the process of a native instance it cannot adopt: reported lost, it never runs on as a second copy', async () => {
    // A host of its own whose supervisor is stopped (as if it had been killed), so nothing restarts the process.
    const crashed = await startHost();
    try {
      await crashed.service.supervisor.stop();
      const pkg = await buildPackage(helloSource());
      const placed = await place(
        crashed.url,
        placeBody(pkg.manifestHash, NATIVE, { start: true, mode: { type: 'listener' } }),
        pkg.dir,
      );
      const pid = (placed.status as { pid: number }).pid;
      const startTime = processStartTime(pid);
      expect(startTime).toBeDefined();
      // Restarted without the publisher among its anchors: the held package no longer verifies.
      const report = await restarted(crashed.dataDir, false).recover();
      expect(report.adopted).toEqual([]);
      expect(report.lost).toEqual([
        { instance_id: placed.instance_id, reason: expect.stringContaining('package unusable') },
      ]);
      // Reported lost (a controller places it again elsewhere): its process must not run on here.
      expect(processStartTime(pid)).toBeUndefined();
      const lost = first.chain
        .range(0)
        .filter((e) => e.kind === 'workload.lifecycle')
        .map((e) => e.payload as Obj)
        .find((p) => p.instance_id === placed.instance_id && p.to === 'lost');
      expect(lost?.reason).toMatch(/its process was stopped/);
    } finally {
      await crashed.close();
    }
  }, 30_000);

  it('a corrupt instances file is set aside and the host starts empty', async () => {
    const dataDir = tempDir('heddle-hs-recover-bad-');
    writeFileSync(join(dataDir, INSTANCES_FILE), '{"schema": 1');
    const report = await restarted(dataDir).recover();
    expect(report.adopted).toEqual([]);
    expect(report.problem?.kept_as).toMatch(/instances\.json\.bad-\d+$/);
    expect(readFileSync(report.problem?.kept_as as string, 'utf8')).toBe('{"schema": 1');
  });
});
