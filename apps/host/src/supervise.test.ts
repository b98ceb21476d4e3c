// The supervisor in a real `heddle-host` daemon: a listener whose process is killed with SIGKILL comes
// back (through the WorkloadHost, chained), and the daemon logs it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { verifyChainFile } from '@heddle/chain';
import { keyPairFromSecret, toHex } from '@heddle/envelope';
import { DirPackageSource } from '@heddle/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Daemon, kill, startFor, waitFor, writeTestHome } from './daemon-fixtures.js';
import { placeBody, TestController, uniquePackage } from './test-controller.js';
import { tempDir } from './test-io.js';

const controller = keyPairFromSecret(new Uint8Array(32).fill(0x73));
const publisher = keyPairFromSecret(new Uint8Array(32).fill(0x74));
const cwd = tempDir();
const home = join(cwd, 'heddle-host');
const ctl = new TestController(controller);
let daemon: Daemon;

beforeAll(async () => {
  await writeTestHome(cwd, {
    controller: toHex(controller.publicKey),
    publisher: toHex(publisher.publicKey),
    extra: { supervisor: { interval_ms: 50, backoff_initial_ms: 200, max_restarts: 3, window_secs: 600 } },
  });
  daemon = await startFor(ctl, cwd);
}, 60_000);

afterAll(async () => {
  await kill(daemon);
});

describe('the supervisor in a real daemon', () => {
  it('brings back a listener whose process was killed with SIGKILL', async () => {
    const pkg = await uniquePackage(publisher);
    const source = DirPackageSource.open(pkg.dir);
    const placed = await ctl.ok(
      ctl.request(
        'workload.place',
        placeBody(pkg.manifestHash, undefined, { start: true, config: { mode: { type: 'listener' } } }),
      ),
      source,
    );
    await source.close();
    const id = placed.instance_id as string;
    expect(placed, JSON.stringify(placed)).toMatchObject({ life: 'running', restarts: 0 });
    const pid = (placed.status as { pid: number }).pid;
    expect(pid).toBeGreaterThan(0);

    process.kill(pid, 'SIGKILL');
    const unhealthy = await waitFor(daemon, 'supervisor: instance unhealthy', 10_000);
    expect(unhealthy).toMatchObject({ level: 'warn', instance_id: id, reason: 'process ended by SIGKILL' });
    const scheduled = await waitFor(daemon, 'supervisor: restart scheduled', 10_000);
    expect(scheduled.delay_ms as number).toBeGreaterThanOrEqual(160);
    expect(scheduled.delay_ms as number).toBeLessThanOrEqual(240);
    const restarted = await waitFor(daemon, 'supervisor: instance restarted', 10_000);
    expect(restarted).toMatchObject({ instance_id: id, restarts: 1 });

    const status = (await ctl.ok(ctl.request('workload.status', { instance_id: id }))).instance as Record<
      string,
      unknown
    >;
    expect(status).toMatchObject({ life: 'running', restarts: 1, state: 'running', desired_running: true });
    const again = (status.status as { pid: number; runs: number }).pid;
    expect(again).not.toBe(pid);
    expect((status.status as { runs: number }).runs).toBe(2);

    const chain = readFileSync(join(home, 'data', 'chain.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { kind: string; payload: Record<string, unknown> });
    const life = chain
      .filter((e) => e.kind === 'workload.lifecycle' && e.payload.instance_id === id)
      .map((e) => `${e.payload.from}->${e.payload.to}`);
    expect(life.slice(-4)).toEqual([
      'loaded->running',
      'running->unhealthy',
      'unhealthy->restarting',
      'restarting->running',
    ]);
    await ctl.ok(ctl.request('workload.stop', { instance_id: id, grace_ms: 500 }));
    expect((await verifyChainFile(join(home, 'data', 'chain.jsonl'))).ok).toBe(true);
  }, 60_000);
});
