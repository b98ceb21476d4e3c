// The lifecycle tick with a Cognitum Seed (moved from control-plane's lifecycle.test.ts): a Seed
// simulator behind pinned TLS, a real control plane with the Seed's driver, an injected clock.
import { join } from 'node:path';
import { tempDir } from '@heddle/control-plane/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { saveToken } from '../credentials.js';
import { SeedSimulator, selfSignedCert } from '../simulator.js';
import { addSeed } from './seed-book.js';
import { openSeedPlane } from './seed-plane.test-util.js';

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const x of open.splice(0).reverse()) await x.close().catch(() => undefined);
});

const SEED_TOKEN = 'sim-token-0123456789abcdef';

const TUNABLES = {
  deadAfterMs: 1_000,
  suspectAfterMs: 500,
  rescheduleBackoffMs: 1_000,
  rescheduleBackoffMaxMs: 4_000,
  rescheduleTimeoutMs: 10_000,
};

/** Real time plus an offset the test moves forward. */
class Clock {
  offset = 0;
  readonly now = (): number => Date.now() + this.offset;
  advance(ms: number): void {
    this.offset += ms;
  }
}

describe('a dead Cognitum Seed', () => {
  it('its store cog is not moved: alert not_migratable, once', async () => {
    const clock = new Clock();
    const sim = await SeedSimulator.start({
      https: selfSignedCert('seed-9'),
      tokens: [SEED_TOKEN],
      tickMs: 50,
    });
    open.push(sim);
    const tokenFile = join(tempDir(), 'seed.token');
    saveToken(tokenFile, SEED_TOKEN);
    const p = await openSeedPlane(undefined, TUNABLES, clock.now);
    open.push(p);
    await addSeed(p.plane, sim.url, { tier: 'paired', spki: sim.spki ?? '', tokenFile });
    const r = await p.plane.place({
      store_pin: { id: 'air-quality', version: '1.2.0', console_commands: [] },
    });
    const id = r.instance?.instance_id ?? '';
    await sim.close();
    open.splice(open.indexOf(sim), 1);
    expect((await p.plane.tick()).dead).toEqual([]);
    clock.advance(TUNABLES.deadAfterMs + 100);
    const t = await p.plane.tick();
    expect(t.lost).toEqual([id]);
    expect(t.alerts).toEqual([
      expect.objectContaining({
        instance_id: id,
        reason: 'not_migratable',
        detail: expect.stringContaining('Seed'),
      }),
    ]);
    expect((await p.plane.tick()).alerts).toEqual([]);
    expect(p.plane.reschedules()).toEqual([]);
  });
});
