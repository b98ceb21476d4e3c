// Place the example cogs through a real `heddle-host` daemon with a test controller: native and WASI,
// start, status, logs, stop, unload, an idempotent re-place, and the daemon's chain after each step.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { verifyChainFile } from '@heddle/chain';
import { keyPairFromSecret, toHex } from '@heddle/envelope';
import { DirPackageSource } from '@heddle/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Daemon, kill, startFor, writeTestHome } from './daemon-fixtures.js';
import { NATIVE, placeBody, TestController, uniquePackage, WASI } from './test-controller.js';
import { tempDir } from './test-io.js';

const controller = keyPairFromSecret(new Uint8Array(32).fill(0x71));
const publisher = keyPairFromSecret(new Uint8Array(32).fill(0x72));
const cwd = tempDir();
const home = join(cwd, 'heddle-host');
const ctl = new TestController(controller);
let daemon: Daemon;

beforeAll(async () => {
  await writeTestHome(cwd, {
    controller: toHex(controller.publicKey),
    publisher: toHex(publisher.publicKey),
  });
  daemon = await startFor(ctl, cwd);
}, 60_000);

afterAll(async () => {
  await kill(daemon);
});

const chain = (): { kind: string; source: string; payload: Record<string, unknown> }[] =>
  readFileSync(join(home, 'data', 'chain.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { kind: string; source: string; payload: Record<string, unknown> });

/**
 * The records since `n`, but the `workload.exit` of runs that ended by themselves: an interval run is
 * chained when it ends, at a moment of its own (docs/runtimes.md), not as a step of the call tested.
 */
const kindsSince = (n: number): string[] =>
  chain()
    .slice(n)
    .map((e) => `${e.source} ${e.kind}`)
    .filter((k) => k !== 'workload.runtime workload.exit');

async function logsOf(id: string, want: string): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const lines = (await ctl.ok(ctl.request('workload.logs', { instance_id: id }))).lines as string[];
    if (lines.join('\n').includes(want)) return lines.join('\n');
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no "${want}" in the logs of ${id}`);
}

describe('placing through a real daemon', () => {
  it.each([
    // Only the program writes this (an error line would name the cog's path, which contains "hello").
    ['native', NATIVE, undefined, '"greeting":'],
    ['wasi', 'wasm32-wasi', WASI, 'wasi-cog'],
  ])(
    '%s: place and start, status, logs, re-place, stop, unload; chained at each step',
    async (route, variant, src, want) => {
      const pkg = await uniquePackage(publisher, src);
      const body = placeBody(pkg.manifestHash, variant, {
        start: true,
        config: { mode: { type: 'interval', secs: 30 } },
      });
      let mark = chain().length;
      const source = DirPackageSource.open(pkg.dir);
      const placed = await ctl.ok(ctl.request('workload.place', body), source);
      await source.close();
      expect(placed).toMatchObject({ route, started: true, already_placed: false, desired_running: true });
      const id = placed.instance_id as string;
      expect(kindsSince(mark)).toEqual(
        expect.arrayContaining([
          'workload.host artifact.fetch',
          'workload workload.load',
          'workload.runtime workload.load',
          'workload workload.start',
          'workload.runtime workload.start',
          'workload.host workload.place',
        ]),
      );
      expect(await logsOf(id, want)).toContain(want);
      const status = await ctl.ok(ctl.request('workload.status', { instance_id: id }));
      expect(status.instance).toMatchObject({ instance_id: id, state: 'running', desired_running: true });

      mark = chain().length;
      const again = await ctl.ok(ctl.request('workload.place', body));
      expect(again).toMatchObject({ instance_id: id, already_placed: true, started: false });
      expect(kindsSince(mark)).toEqual(['workload.host workload.place']);
      expect(chain().findLast((e) => e.kind === 'workload.place')?.payload).toMatchObject({
        phase: 'already_placed',
        instance_id: id,
        fetched: false,
      });

      mark = chain().length;
      const stopped = await ctl.ok(ctl.request('workload.stop', { instance_id: id, grace_ms: 1000 }));
      expect((stopped.status as { state: string }).state).toBe('stopped');
      expect(kindsSince(mark)).toEqual([
        'workload workload.stop',
        'workload.runtime workload.stop',
        'workload.host workload.lifecycle',
      ]);
      expect(chain().at(-1)?.payload).toMatchObject({ side: 'host', from: 'running', to: 'stopped' });

      mark = chain().length;
      await ctl.ok(ctl.request('workload.unload', { instance_id: id }));
      expect(kindsSince(mark)).toEqual([
        'workload workload.unload',
        'workload.runtime workload.unload',
        'workload.host workload.lifecycle',
      ]);
      expect(chain().at(-1)?.payload).toMatchObject({ side: 'host', from: 'stopped', to: 'unloaded' });
      const listing = await ctl.ok(ctl.request('workload.status', { include_departed: true }));
      expect(listing.instances).toEqual([]);
      expect(listing.departed).toEqual(
        expect.arrayContaining([expect.objectContaining({ instance_id: id, reason: 'unloaded' })]),
      );

      const verified = await verifyChainFile(join(home, 'data', 'chain.jsonl'));
      expect(verified.ok).toBe(true);
    },
  );
});
