import { createServer, type Server } from 'node:net';
import type { JsonValue } from '@heddle/envelope';
import { hostCogArch } from '@heddle/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  flakyPackage,
  lifeOf,
  moves,
  type SupervisedHost,
  startSupervisedHost,
  until,
} from './supervision-fixtures.js';
import {
  DEFAULT_SUPERVISOR_POLICY,
  restartDelayMs,
  seededRandom,
  supervisorPolicy,
} from './supervisor-policy.js';
import { type BuiltPackage, call, placeBody, request } from './test-fixtures.js';

const NATIVE = `${hostCogArch() ?? 'x86_64'}-native`;
type Obj = Record<string, unknown>;
const result = async (p: Promise<{ result: unknown }>): Promise<Obj> => (await p).result as Obj;

let host: SupervisedHost;
let pkg: BuiltPackage;

beforeAll(async () => {
  host = await startSupervisedHost({
    supervisor: {
      intervalMs: 20,
      maxRestarts: 2,
      windowMs: 60_000,
      backoffInitialMs: 150,
      backoffMaxMs: 1_000,
      random: seededRandom(8),
      readinessGraceMs: 0,
      readinessMisses: 2,
      stopGraceMs: 500,
    },
  });
  pkg = await flakyPackage();
}, 30_000);
afterAll(async () => {
  await host.close();
});

const place = (
  values: { [key: string]: JsonValue },
  mode: JsonValue = { type: 'listener' },
  start = true,
): Promise<Obj> =>
  result(
    call(
      host.url,
      request(
        'workload.place',
        placeBody(pkg.manifestHash, NATIVE, { name: 'flaky-cog', start, mode, values }),
      ),
      { pkgDir: pkg.dir },
    ),
  );
const status = async (id: string): Promise<Obj> =>
  (await result(call(host.url, request('workload.status', { instance_id: id })))).instance as Obj;

describe('the supervisor policy', () => {
  it('has the documented defaults and refuses bad values naming the field', () => {
    expect(DEFAULT_SUPERVISOR_POLICY).toMatchObject({
      intervalMs: 1000,
      maxRestarts: 3,
      windowMs: 600_000,
      backoffInitialMs: 1000,
      backoffMaxMs: 30_000,
      jitter: 0.2,
    });
    expect(() => supervisorPolicy({ intervalMs: 0 })).toThrow(/supervisor.intervalMs/);
    expect(() => supervisorPolicy({ jitter: 1.5 })).toThrow(/supervisor.jitter/);
    expect(() => supervisorPolicy({ backoffInitialMs: 10, backoffMaxMs: 5 })).toThrow(
      /supervisor.backoffMaxMs/,
    );
  });

  it('doubles from the initial wait to the cap, with jitter within +-20% (seeded: reproducible)', () => {
    const policy = supervisorPolicy({ random: seededRandom(1) });
    const waits = [0, 1, 2, 3, 4, 5, 6, 9].map((n) => restartDelayMs(n, policy));
    const bases = [1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000];
    waits.forEach((w, i) => {
      expect(w).toBeGreaterThanOrEqual((bases[i] as number) * 0.8);
      expect(w).toBeLessThanOrEqual((bases[i] as number) * 1.2);
    });
    const again = supervisorPolicy({ random: seededRandom(1) });
    expect([0, 1, 2, 3, 4, 5, 6, 9].map((n) => restartDelayMs(n, again))).toEqual(waits);
    const flat = supervisorPolicy({ jitter: 0 });
    expect(restartDelayMs(2, flat)).toBe(4000);
  });
});

describe('the supervisor (real processes)', () => {
  it('restarts a listener that exits, with backoff, until the budget is spent; then failed for good', async () => {
    const placed = await place({ life: '0.2' });
    const id = placed.instance_id as string;
    expect(placed).toMatchObject({ life: 'running', restarts: 0, lease_stopped: false });
    const failed = await until(
      () => lifeOf(host.chain, id),
      (m) => m.some((t) => t.to === 'failed'),
      15_000,
    );
    expect(moves(failed)).toEqual([
      'requested->placed',
      'placed->fetching',
      'fetching->verified',
      'verified->loaded',
      'loaded->running',
      'running->unhealthy',
      'unhealthy->restarting',
      'restarting->running',
      'running->unhealthy',
      'unhealthy->restarting',
      'restarting->running',
      'running->unhealthy',
      'unhealthy->failed',
    ]);
    expect(failed.at(-1)?.reason).toBe('restart budget spent');
    expect(failed.find((t) => t.to === 'unhealthy')?.reason).toBe('process exited (exit code 3)');
    // Each restart waited out its backoff: 150 ms then 300 ms, each +-20%.
    const waits = failed.filter((t) => t.to === 'restarting').map((t) => t.payload.delay_ms as number);
    expect(waits).toHaveLength(2);
    expect(waits[0]).toBeGreaterThanOrEqual(120);
    expect(waits[0]).toBeLessThanOrEqual(180);
    expect(waits[1]).toBeGreaterThanOrEqual(240);
    expect(waits[1]).toBeLessThanOrEqual(360);
    for (const [i, t] of failed.entries()) {
      if (t.to !== 'restarting') continue;
      const restarted = failed[i + 1] as (typeof failed)[number];
      const waited = restarted.at_ms - t.at_ms;
      expect(waited).toBeGreaterThanOrEqual((t.payload.delay_ms as number) - 5);
      expect(waited).toBeLessThan((t.payload.delay_ms as number) + 300);
    }
    // Not restarted again.
    await new Promise((r) => setTimeout(r, 600));
    expect(moves(lifeOf(host.chain, id))).toHaveLength(failed.length);
    const s = await status(id);
    expect(s).toMatchObject({ life: 'failed', restarts: 2, desired_running: true, state: 'exited' });
    expect((s.status as Obj).runs).toBe(3);
    expect(host.events.map((e) => e.type)).toEqual(
      expect.arrayContaining(['unhealthy', 'restart_scheduled', 'restarted', 'failed']),
    );
    // Every restart went through the WorkloadHost: gated and chained as a start.
    const starts = host.chain
      .range(0)
      .filter((e) => e.source === 'workload.runtime' && e.kind === 'workload.start')
      .filter((e) => (e.payload as Obj).instance_id === id);
    expect(starts).toHaveLength(3);
    expect(host.errors).toEqual([]);
    expect(host.chain.verify().ok).toBe(true);

    // An operator's start is a fresh intention: it runs again with a fresh budget.
    const started = await result(call(host.url, request('workload.start', { instance_id: id })));
    expect((started.status as Obj).state).toBe('running');
    expect((await status(id)).restarts).toBe(0);
    await result(call(host.url, request('workload.stop', { instance_id: id, grace_ms: 200 })));
    await result(call(host.url, request('workload.unload', { instance_id: id })));
    expect(moves(lifeOf(host.chain, id)).at(-1)).toBe('stopped->unloaded');
  }, 30_000);

  it('an instance whose budget is spent stays failed through a crash and restart of the host', async () => {
    const crashing = await startSupervisedHost({ supervisor: { intervalMs: 20, maxRestarts: 0 } });
    const body = placeBody(pkg.manifestHash, NATIVE, {
      name: 'flaky-cog',
      start: true,
      mode: { type: 'listener' },
      values: { life: '0.1' },
    });
    const placed = await result(call(crashing.url, request('workload.place', body), { pkgDir: pkg.dir }));
    const id = placed.instance_id as string;
    await until(
      () => lifeOf(crashing.chain, id),
      (m) => m.some((t) => t.to === 'failed'),
    );
    // Killed: nothing is written on the way out.
    await crashing.service.supervisor.stop();
    await crashing.server.close();
    await crashing.chain.close();
    const restarted = await startSupervisedHost({
      dataDir: crashing.dataDir,
      supervisor: { intervalMs: 20, maxRestarts: 2, backoffInitialMs: 50 },
    });
    try {
      const report = await restarted.service.recover();
      expect(report.adopted).toEqual([{ instance_id: id, life: 'failed', pid: null }]);
      await new Promise((r) => setTimeout(r, 500));
      const s = (await result(call(restarted.url, request('workload.status', { instance_id: id }))))
        .instance as Obj;
      expect(s).toMatchObject({ life: 'failed', restarts: 0, adopted: true });
      expect((s.status as Obj).runs).toBe(0);
      expect(restarted.events).toEqual([]);
      expect(restarted.errors).toEqual([]);
    } finally {
      await restarted.close();
    }
  }, 20_000);

  it('starts again, after a graceful restart of the host, a listener the shutdown stopped', async () => {
    const first = await startSupervisedHost({ supervisor: { intervalMs: 20 } });
    const body = placeBody(pkg.manifestHash, NATIVE, {
      name: 'flaky-cog',
      start: true,
      mode: { type: 'listener' },
      values: {},
    });
    const placed = await result(call(first.url, request('workload.place', body), { pkgDir: pkg.dir }));
    const id = placed.instance_id as string;
    await first.close();
    const second = await startSupervisedHost({
      dataDir: first.dataDir,
      supervisor: { intervalMs: 20, backoffInitialMs: 50 },
    });
    try {
      await second.service.recover();
      // The process runs a moment before the restart's lifecycle move is made, and the move is made
      // (status shows it) a moment before it is chained (the append is awaited after): wait for all three.
      const { s, chained } = await until(
        async () => ({
          s: (await result(call(second.url, request('workload.status', { instance_id: id }))))
            .instance as Obj,
          chained: moves(lifeOf(second.chain, id)),
        }),
        (v) =>
          v.s.state === 'running' && v.s.life === 'running' && v.chained.at(-1) === 'restarting->running',
        10_000,
      );
      // It was meant to run (desired_running kept through the shutdown): the supervisor starts it again.
      expect(s).toMatchObject({ desired_running: true, life: 'running', state: 'running', adopted: true });
      expect(chained.slice(-2)).toEqual(['stopped->restarting', 'restarting->running']);
      expect(second.errors).toEqual([]);
    } finally {
      await second.close();
    }
  }, 20_000);

  it('never restarts an instance that is not meant to run (stopped by the operator)', async () => {
    const placed = await place({ life: '0.4' });
    const id = placed.instance_id as string;
    await result(call(host.url, request('workload.stop', { instance_id: id, grace_ms: 200 })));
    await new Promise((r) => setTimeout(r, 800));
    const s = await status(id);
    expect(s).toMatchObject({ life: 'stopped', desired_running: false, state: 'stopped', restarts: 0 });
    expect(moves(lifeOf(host.chain, id)).slice(4)).toEqual(['loaded->running', 'running->stopped']);
    await result(call(host.url, request('workload.unload', { instance_id: id })));
    expect(host.errors).toEqual([]);
  }, 20_000);

  it('marks a once run that ended finished, and never restarts it', async () => {
    const placed = await place({ life: '0.1' }, { type: 'once' });
    const id = placed.instance_id as string;
    const life = await until(
      () => lifeOf(host.chain, id),
      (m) => m.some((t) => t.to === 'finished'),
    );
    expect(moves(life).slice(4)).toEqual(['loaded->running', 'running->finished']);
    expect(life.at(-1)?.payload).toMatchObject({ exit_code: 3, signal: null });
    await new Promise((r) => setTimeout(r, 400));
    const s = await status(id);
    expect(s).toMatchObject({ life: 'finished', restarts: 0, state: 'exited' });
    expect((s.status as Obj).runs).toBe(1);
    await result(call(host.url, request('workload.unload', { instance_id: id })));
    expect(moves(lifeOf(host.chain, id)).at(-1)).toBe('finished->unloaded');
    expect(host.errors).toEqual([]);
  }, 20_000);

  it('restarts a listener whose TCP port stops accepting (built-in readiness probe)', async () => {
    // The cog does not listen itself: the test's server plays its port, and is closed to fail it.
    const server: Server = createServer((s) => s.destroy());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as { port: number }).port;
    const placed = await place({ port });
    const id = placed.instance_id as string;
    await new Promise((r) => setTimeout(r, 300));
    expect(await status(id)).toMatchObject({ life: 'running', restarts: 0 });
    await new Promise<void>((r) => server.close(() => r()));
    const life = await until(
      () => lifeOf(host.chain, id),
      (m) => m.some((t) => t.from === 'restarting' && t.to === 'running'),
    );
    const unhealthy = life.find((t) => t.to === 'unhealthy');
    expect(unhealthy?.reason).toBe('not ready: 2 readiness probes failed in a row');
    // The live process was stopped before the restart (a stop and then a start, both chained).
    const kinds = host.chain
      .range(0)
      .filter((e) => e.source === 'workload.runtime' && (e.payload as Obj).instance_id === id)
      .map((e) => e.kind);
    expect(kinds.slice(0, 4)).toEqual(['workload.load', 'workload.start', 'workload.stop', 'workload.start']);
    await result(call(host.url, request('workload.stop', { instance_id: id, grace_ms: 200 })));
    await result(call(host.url, request('workload.unload', { instance_id: id })));
    expect(host.errors).toEqual([]);
  }, 20_000);

  it('uses the readiness option instead of the built-in probe; a probe that rejects counts as not ready', async () => {
    const probed: string[] = [];
    const custom = await startSupervisedHost({
      supervisor: {
        intervalMs: 20,
        maxRestarts: 1,
        backoffInitialMs: 50,
        readinessGraceMs: 0,
        readinessMisses: 1,
      },
      readiness: async (p) => {
        probed.push(p.instanceId);
        throw new Error('the probe broke');
      },
    });
    try {
      const body = placeBody(pkg.manifestHash, NATIVE, {
        name: 'flaky-cog',
        start: true,
        mode: { type: 'listener' },
        values: { port: 9 },
      });
      const placed = await result(call(custom.url, request('workload.place', body), { pkgDir: pkg.dir }));
      const id = placed.instance_id as string;
      const life = await until(
        () => lifeOf(custom.chain, id),
        (m) => m.some((t) => t.to === 'failed'),
      );
      expect(moves(life).slice(5)).toEqual([
        'running->unhealthy',
        'unhealthy->restarting',
        'restarting->running',
        'running->unhealthy',
        'unhealthy->failed',
      ]);
      expect(probed.every((i) => i === id)).toBe(true);
      // `failed` does not run: the live (but never ready) process was stopped.
      const s = (await result(call(custom.url, request('workload.status', { instance_id: id }))))
        .instance as Obj;
      expect(s).toMatchObject({ life: 'failed', state: 'stopped' });
      expect(custom.errors).toEqual([]);
    } finally {
      await custom.close();
    }
  }, 20_000);
});
