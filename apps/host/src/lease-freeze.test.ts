// At most once with a lease (issue 15 item 12), in a real `heddle-host` daemon frozen with SIGSTOP: a
// host whose controller lease expired while it was frozen stops its instance before it serves
// anything, even the controller request that had been waiting for it and would renew the lease.
import { keyPairFromSecret, toHex } from '@heddle/envelope';
import { DirPackageSource, WireSession } from '@heddle/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Daemon, kill, startFor, writeTestHome } from './daemon-fixtures.js';
import { placeBody, TestController, uniquePackage } from './test-controller.js';
import { tempDir } from './test-io.js';

const controller = keyPairFromSecret(new Uint8Array(32).fill(0x75));
const publisher = keyPairFromSecret(new Uint8Array(32).fill(0x76));
const cwd = tempDir();
const ctl = new TestController(controller);
let daemon: Daemon;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  await writeTestHome(cwd, {
    controller: toHex(controller.publicKey),
    publisher: toHex(publisher.publicKey),
    extra: { controller_lease_secs: 2, supervisor: { interval_ms: 50 } },
  });
  daemon = await startFor(ctl, cwd);
}, 60_000);

afterAll(async () => {
  if (daemon.proc.pid !== undefined) process.kill(daemon.proc.pid, 'SIGCONT');
  await kill(daemon);
});

describe('a host frozen past its controller lease', () => {
  it('advertises its lease, and on waking stops its instance before it serves the request that waited', async () => {
    const described = await ctl.ok(ctl.request('workload.describe', {}, { target: '*' }));
    expect((described.advertisement as { lease: unknown }).lease).toEqual({
      lease_ms: 2_000,
      stops_within_ms: 50 + 5_000,
    });
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
    const cog = (placed.status as { pid: number }).pid;
    expect(placed).toMatchObject({ life: 'running' });
    const host = daemon.proc.pid as number;

    // The whole machine freezes (the daemon and its instance), with a connection open to it.
    const session = await WireSession.connect(ctl.url);
    process.kill(cog, 'SIGSTOP');
    process.kill(host, 'SIGSTOP');
    // A controller request reaches the frozen host's socket and waits there, past the lease.
    const answer = session.call(ctl.request('workload.status', { instance_id: id }), {
      expectedPublicKey: ctl.hostKey,
      timeoutMs: 30_000,
    });
    await sleep(2_600);
    process.kill(cog, 'SIGCONT');
    process.kill(host, 'SIGCONT');
    const status = (await answer).result as { instance: Record<string, unknown> };
    await session.close();
    // Served after the lease stop: the request did not renew the lease first.
    expect(status.instance).toMatchObject({ life: 'stopped', lease_stopped: true, desired_running: true });
    expect(() => process.kill(cog, 0)).toThrow(); // its process is gone
  }, 60_000);
});
