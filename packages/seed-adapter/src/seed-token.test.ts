import { Gate } from '@heddle/gate';
import { WorkloadHost } from '@heddle/runtime';
import { describe, expect, it, type TestContext } from 'vitest';
import { SeedClient } from './seed-client.js';
import {
  assertNoToken,
  PINS,
  refusal,
  SEED_POLICY,
  type SeedHarness,
  seedConfig,
  seedHarness,
} from './seed-harness.test-util.js';
import { seedPinWorkload } from './seed-pins.js';
import { SeedApiRuntime } from './seed-runtime.js';

async function setup(ctx: TestContext): Promise<SeedHarness> {
  const h = await seedHarness();
  ctx.onTestFinished(() => h.close());
  return h;
}

const AIR = PINS[0];
if (AIR === undefined) throw new Error('no pin');

describe('the Seed token never leaves the client', () => {
  it('appears in no chained record, evidence, status, log line or error of a full flow', async (ctx) => {
    const h = await setup(ctx);
    const w = seedPinWorkload(AIR);
    const handle = await h.host.load(w, seedConfig({ interval: 4 }));
    await h.host.start(handle);
    const st = await h.host.status(handle);
    await new Promise((r) => setTimeout(r, 60));
    const lines = await h.host.logs(handle, 50);
    const con = await h.host.console(handle, '--once');
    const stop = await h.host.stop(handle, 500);
    const errors = [
      await refusal(h.host.console(handle, 'not-pinned')),
      await refusal(h.host.load(seedPinWorkload({ ...AIR, version: '9.9.9' }), seedConfig())),
    ];
    await h.host.unload(handle);
    assertNoToken(h, handle, st, lines, con, stop, ...errors, await h.runtime.provides());
  });

  it('appears in nothing when the Seed refuses the token (not paired), chained refusals included', async (ctx) => {
    const h = await setup(ctx);
    const rt = new SeedApiRuntime({
      api: new SeedClient({ url: h.sim.url, token: `${h.token}x`, allowPlainHttp: true }),
      pins: PINS,
      nodeId: 'seed-node-1',
    });
    const gate = new Gate({ policy: SEED_POLICY, recorder: h.chain });
    const host = new WorkloadHost({
      runtime: rt,
      gate,
      recorder: h.chain,
      agent: 'seed-host',
      nodeTier: 'paired',
    });
    const e = await refusal(host.load(seedPinWorkload(AIR), seedConfig()));
    expect(e.message).toContain('not_paired');
    expect(JSON.stringify(h.chain.range(0))).toContain('not_paired');
    expect(JSON.stringify(h.chain.range(0))).not.toContain(`${h.token}x`);
    assertNoToken(h, e);
  });
});
