import { describe, expect, it, type TestContext } from 'vitest';
import {
  assertNoToken,
  PINS,
  refusal,
  runtimeTrail,
  type SeedHarness,
  seedConfig,
  seedHarness,
} from './seed-harness.test-util.js';
import { seedPinWorkload } from './seed-pins.js';

async function setup(ctx: TestContext): Promise<SeedHarness> {
  const h = await seedHarness();
  ctx.onTestFinished(() => h.close());
  return h;
}

const w = (id: string) => {
  const p = PINS.find((x) => x.id === id);
  if (p === undefined) throw new Error(id);
  return seedPinWorkload(p);
};

describe('SeedApiRuntime console runs: pinned commands only, the sensor feed to itself', () => {
  it('preempts the other running cogs through the host, runs, and resumes them, all chained', async (ctx) => {
    const h = await setup(ctx);
    const air = await h.host.load(w('air-quality'), seedConfig());
    const vib = await h.host.load(w('vibration'), seedConfig());
    await h.host.start(vib);
    await h.host.start(air);
    await h.client.install('thermal'); // not Heddle's: still preempted (it holds the feed too)
    const from = h.chain.range(0).length;
    const ev = await h.host.console(air, 'calibrate');
    expect(ev.exitCode).toBe(0);
    expect(ev.args).toEqual(['calibrate']);
    expect(ev.stdout).toContain('air-quality> calibrate');
    expect([...(ev.stoppedForConsole ?? [])].sort()).toEqual(['thermal', 'vibration']);
    const running = h.sim
      .installed()
      .filter((c) => c.running)
      .map((c) => c.id)
      .sort();
    expect(running).toEqual(['air-quality', 'thermal', 'vibration']);
    const trail = runtimeTrail(h.chain, from);
    expect(trail.filter((k) => k.includes('preempt-for-console')).length).toBe(2);
    expect(trail.filter((k) => k.includes('resume-after-console')).length).toBe(2);
    expect(trail.at(-1)).toBe('workload.start air-quality console');
    assertNoToken(h, ev);
  });

  it('reports a failing console command as evidence with its exit code', async (ctx) => {
    const h = await setup(ctx);
    const air = await h.host.load(w('air-quality'), seedConfig());
    const ev = await h.host.console(air, 'fail');
    expect(ev.exitCode).toBe(1);
    expect(ev.stderr).toContain('simulated failure');
    expect(ev.stoppedForConsole).toEqual([]);
  });

  it('refuses a command the operator did not pin; the cogs preempted for it are resumed', async (ctx) => {
    const h = await setup(ctx);
    const air = await h.host.load(w('air-quality'), seedConfig());
    const vib = await h.host.load(w('vibration'), seedConfig());
    await h.host.start(vib);
    const e = await refusal(h.host.console(air, 'reboot --force'));
    expect(e.code).toBe('invalid_config');
    expect(e.field).toBe('command');
    expect(e.message).toContain('not a pinned console command');
    // The host preempted and resumed vibration around the refused run; it runs again.
    expect(h.sim.installed().find((c) => c.id === 'vibration')?.running).toBe(true);
    expect(h.sim.requests.some((r) => r.path.endsWith('/console'))).toBe(false);
    const noCommands = await refusal(h.host.console(vib, 'calibrate'));
    expect(noCommands.message).toContain('pinned: none');
  });

  it('the adapter alone refuses a console run while another cog holds the feed', async (ctx) => {
    const h = await setup(ctx);
    const air = await h.runtime.load(w('air-quality'), seedConfig());
    await h.client.install('presence');
    const pre = await h.runtime.consolePreemptions(air);
    expect(pre).toEqual([{ registry: 'cognitum-seed', workloadId: 'presence', version: '2.0.0' }]);
    const e = await refusal(h.runtime.console(air, 'calibrate'));
    expect(e.code).toBe('runtime');
    expect(e.message).toContain('sensor feed to itself');
    expect(h.sim.installed().find((c) => c.id === 'presence')?.running).toBe(true);
  });

  it('names the instance of a preempted cog this adapter holds', async (ctx) => {
    const h = await setup(ctx);
    const air = await h.runtime.load(w('air-quality'), seedConfig());
    const vib = await h.runtime.load(w('vibration'), seedConfig());
    await h.runtime.start(vib);
    expect(await h.runtime.consolePreemptions(air)).toEqual([
      { registry: 'cognitum-seed', workloadId: 'vibration', version: '0.4.1', instanceId: vib.instanceId },
    ]);
    const bad = await refusal(
      h.runtime.preempt({ registry: 'other', workloadId: 'vibration', version: '0.4.1' }),
    );
    expect(bad.code).toBe('invalid_config');
  });
});
