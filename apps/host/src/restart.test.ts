// A host daemon killed with SIGKILL and started again on the same home: the native instance it placed
// keeps running through the crash (its output goes through FIFOs, never a pipe that would SIGPIPE it),
// is adopted again (same pid) and can be stopped and unloaded; a WASI instance, whose runs die with
// the host, is reported departed `lost`.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { verifyChainFile } from '@heddle/chain';
import { keyPairFromSecret, toHex } from '@heddle/envelope';
import { processStartTime } from '@heddle/runtime';
import { DirPackageSource } from '@heddle/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Daemon, kill, startFor, writeTestHome } from './daemon-fixtures.js';
import { NATIVE, placeBody, TestController, uniquePackage, WASI } from './test-controller.js';
import { tempDir } from './test-io.js';

const controller = keyPairFromSecret(new Uint8Array(32).fill(0x81));
const publisher = keyPairFromSecret(new Uint8Array(32).fill(0x82));
const cwd = tempDir();
const home = join(cwd, 'heddle-host');
const ctl = new TestController(controller);
const daemons: Daemon[] = [];
const pids: number[] = [];

async function start(): Promise<Daemon> {
  const d = await startFor(ctl, cwd);
  daemons.push(d);
  return d;
}
beforeAll(async () => {
  await writeTestHome(cwd, {
    controller: toHex(controller.publicKey),
    publisher: toHex(publisher.publicKey),
  });
}, 60_000);

afterAll(async () => {
  for (const d of daemons) await kill(d);
  for (const pid of pids) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
});

const alive = (pid: number, startTime: string | undefined): boolean =>
  startTime !== undefined && processStartTime(pid) === startTime;

async function logsOf(id: string, want: RegExp): Promise<string[]> {
  for (let i = 0; i < 100; i++) {
    const lines = (await ctl.ok(ctl.request('workload.logs', { instance_id: id, lines: 1000 })))
      .lines as string[];
    if (lines.some((l) => want.test(l))) return lines;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no ${want} in the logs of ${id}`);
}

describe('a host daemon killed with SIGKILL and started again', () => {
  it('re-adopts its native instance (same pid, still running, controllable) and reports the WASI one lost', async () => {
    const first = await start();
    // A native cog that writes a line every second: with its output on a pipe, its first write after
    // the crash would kill it (SIGPIPE).
    const native = await uniquePackage(publisher);
    const source = DirPackageSource.open(native.dir);
    const placed = await ctl.ok(
      ctl.request(
        'workload.place',
        placeBody(native.manifestHash, NATIVE, {
          start: true,
          config: { mode: { type: 'interval', secs: 1 }, values: { greeting: 'before', interval_secs: 1 } },
        }),
      ),
      source,
    );
    await source.close();
    const id = placed.instance_id as string;
    const pid = (placed.status as { pid: number }).pid;
    pids.push(pid);
    const startTime = processStartTime(pid);
    expect(alive(pid, startTime)).toBe(true);
    const wasi = await uniquePackage(publisher, WASI);
    const wasiSource = DirPackageSource.open(wasi.dir);
    const wasiPlaced = await ctl.ok(
      ctl.request(
        'workload.place',
        placeBody(wasi.manifestHash, 'wasm32-wasi', {
          start: true,
          config: { mode: { type: 'interval', secs: 30 } },
        }),
      ),
      wasiSource,
    );
    await wasiSource.close();
    const wasiId = wasiPlaced.instance_id as string;
    const stored = JSON.parse(readFileSync(join(home, 'data', 'instances.json'), 'utf8')) as {
      instances: { instance_id: string }[];
    };
    expect(stored.instances.map((i) => i.instance_id).sort()).toEqual([id, wasiId].sort());

    first.proc.kill('SIGKILL');
    await first.exited;
    // Two more lines were written with no host reading: the program is still there.
    await new Promise((r) => setTimeout(r, 2_500));
    expect(alive(pid, startTime)).toBe(true);

    const second = await start();
    const adopted = second.lines.find((l) => l.msg === 'instance adopted');
    expect(adopted).toMatchObject({ instance_id: id, life: 'running', pid });
    expect(second.lines.find((l) => l.msg === 'instance lost')).toMatchObject({ instance_id: wasiId });
    const listing = await ctl.ok(ctl.request('workload.status', { include_departed: true }));
    const instances = listing.instances as Record<string, unknown>[];
    expect(instances.map((i) => i.instance_id)).toEqual([id]);
    expect(instances[0]).toMatchObject({
      adopted: true,
      state: 'running',
      life: 'running',
      desired_running: true,
    });
    expect((instances[0]?.status as { pid: number } | undefined)?.pid).toBe(pid);
    expect(listing.departed).toEqual([expect.objectContaining({ instance_id: wasiId, reason: 'lost' })]);
    // Output written while no host read, and after, reaches the restarted host's logs.
    const lines = await logsOf(id, /"greeting":"before"/);
    expect(lines.filter((l) => l.includes('"greeting":"before"')).length).toBeGreaterThan(0);

    const stopped = await ctl.ok(ctl.request('workload.stop', { instance_id: id, grace_ms: 1000 }));
    expect((stopped.status as { state: string }).state).toBe('stopped');
    expect(alive(pid, startTime)).toBe(false);
    await ctl.ok(ctl.request('workload.unload', { instance_id: id }));
    const after = await ctl.ok(ctl.request('workload.status', {}));
    expect(after.instances).toEqual([]);
    const left = JSON.parse(readFileSync(join(home, 'data', 'instances.json'), 'utf8')) as {
      instances: unknown[];
    };
    expect(left.instances).toEqual([]);
    expect((await verifyChainFile(join(home, 'data', 'chain.jsonl'))).ok).toBe(true);
  }, 90_000);
});
