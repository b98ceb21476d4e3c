import { describe, expect, it, type TestContext } from 'vitest';
import { SYNTHETIC_FEED_NOTE, syntheticFeedOf } from './seed-console.js';
import {
  assertNoToken,
  PINS,
  refusal,
  runtimeTrail,
  type SeedHarness,
  type SeedHarnessOptions,
  seedConfig,
  seedHarness,
  wrapApi,
} from './seed-harness.test-util.js';
import { seedPinWorkload } from './seed-pins.js';
import { DEFAULT_CATALOG, storeCog } from './simulator/sim-types.js';

async function setup(ctx: TestContext, o: SeedHarnessOptions = {}): Promise<SeedHarness> {
  const h = await seedHarness(o);
  ctx.onTestFinished(() => h.close());
  return h;
}

const w = (id: string) => {
  const p = PINS.find((x) => x.id === id);
  if (p === undefined) throw new Error(id);
  return seedPinWorkload(p);
};

describe('SeedApiRuntime console runs: pinned commands only, the sensor feed to itself', () => {
  it('preempts every running cog (its own daemon too) through the host, runs on the feed, resumes them', async (ctx) => {
    const h = await setup(ctx);
    const air = await h.host.load(w('air-quality'), seedConfig());
    const vib = await h.host.load(w('vibration'), seedConfig());
    await h.host.start(vib);
    await h.host.start(air);
    await h.client.install('thermal'); // not loaded by Heddle: still preempted (it holds the feed too)
    const from = h.chain.range(0).length;
    const ev = await h.host.console(air, '--once');
    expect(ev.exitCode).toBe(0);
    expect(ev.args).toEqual(['--once']);
    expect(JSON.parse(ev.stdout.trim())).toMatchObject({ cog: 'air-quality', source: 'csi' });
    expect(ev.notes).toEqual([]);
    expect([...(ev.stoppedForConsole ?? [])].sort()).toEqual(['air-quality', 'thermal', 'vibration']);
    const running = h.sim
      .installed()
      .filter((c) => c.running)
      .map((c) => c.id)
      .sort();
    expect(running).toEqual(['air-quality', 'thermal', 'vibration']);
    const trail = runtimeTrail(h.chain, from);
    expect(trail.filter((k) => k.includes('preempt-for-console')).length).toBe(3);
    expect(trail.filter((k) => k.includes('resume-after-console')).length).toBe(3);
    expect(trail.at(-1)).toBe('workload.start air-quality console');
    assertNoToken(h, ev);
  });

  it('a run that ended up on synthetic data carries the synthetic_feed note (the answer errors and feed)', async (ctx) => {
    // Someone starts a cog between the preemptions and the run: the Seed runs it on synthetic data.
    let h: SeedHarness | undefined;
    h = await setup(ctx, {
      wrap: (api) =>
        wrapApi(api, {
          console: async (id, command) => {
            await h?.client.install('presence');
            return api.console(id, command);
          },
        }),
    });
    const air = await h.host.load(w('air-quality'), seedConfig());
    const ev = await h.host.console(air, '--once');
    expect(ev.exitCode).toBe(0);
    expect(ev.notes).toEqual([expect.stringMatching(new RegExp(`^${SYNTHETIC_FEED_NOTE}: .*synthetic`))]);
    expect(syntheticFeedOf({ output: ['{"source":"synthetic"}'], errors: [] })).toMatch(/synthetic/);
    expect(
      syntheticFeedOf({ output: ['{"source":"csi"}', 'synthetic words'], errors: ['ok'] }),
    ).toBeUndefined();
  });

  it('reports a failing console command as evidence with its exit code', async (ctx) => {
    const h = await setup(ctx);
    const air = await h.host.load(w('air-quality'), seedConfig());
    h.sim.failNextConsole('sensor read failed');
    const ev = await h.host.console(air, '--once');
    expect(ev.exitCode).toBe(1);
    expect(ev.stderr).toContain('sensor read failed');
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
    const noCommands = await refusal(h.host.console(vib, '--once'));
    expect(noCommands.message).toContain('pinned: none');
  });

  it("refuses a pinned command the Seed manifest's allowed_commands does not list, before sending it", async (ctx) => {
    const h = await setup(ctx);
    const air = await h.host.load(w('air-quality'), seedConfig());
    const e = await refusal(h.host.console(air, '--calibrate'));
    expect(e.code).toBe('invalid_config');
    expect(e.message).toContain('allowed_commands');
    expect(h.sim.requests.some((r) => r.path.endsWith('/console'))).toBe(false);
  });

  it('the adapter alone refuses a console run while another cog holds the feed', async (ctx) => {
    const h = await setup(ctx);
    const air = await h.runtime.load(w('air-quality'), seedConfig());
    await h.client.install('presence');
    const pre = await h.runtime.consolePreemptions(air);
    expect(pre).toEqual([{ registry: 'cognitum-seed', workloadId: 'presence', version: '2.0.0' }]);
    const e = await refusal(h.runtime.console(air, '--once'));
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

  it('records the preemption of a cog someone else installed and the operator never pinned as unsigned, not attested', async (ctx) => {
    const h = await setup(ctx, { sim: { catalog: [...DEFAULT_CATALOG, storeCog('weather', '3.1.0')] } });
    const air = await h.host.load(w('air-quality'), seedConfig());
    await h.client.install('weather'); // someone else's; no pin names it
    expect(await h.runtime.consolePreemptions(air)).toEqual([
      { registry: 'cognitum-seed', workloadId: 'weather', version: '3.1.0', operatorPinned: false },
    ]);
    const from = h.chain.range(0).length;
    await h.host.console(air, '--once');
    const events = h.chain.range(from);
    const gated = events.filter(
      (e) => e.source === 'workload' && JSON.stringify(e.payload).includes('cognitum-seed/weather@3.1.0'),
    );
    expect(gated.length).toBeGreaterThanOrEqual(2); // its stop and its resume
    for (const e of gated) {
      const ctxOf = (e.payload as { context?: { package_trust?: string } }).context;
      expect(ctxOf?.package_trust).toBe('unsigned');
    }
    const preempts = events.filter(
      (e) =>
        e.source === 'workload.runtime' && (e.payload as { workload_id?: string }).workload_id === 'weather',
    );
    expect(preempts.length).toBe(2);
    for (const e of preempts)
      expect((e.payload as { operator_pinned?: boolean }).operator_pinned).toBe(false);
  });
});
