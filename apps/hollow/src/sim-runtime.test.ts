import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPair } from '@heddle/envelope';
import { buildCogPackage, NO_REVOCATIONS, parseTrust, VerifiedPackageStore } from '@heddle/package';
import { hostCogArch, RuntimeError, type RuntimeWorkload, workloadFromPackage } from '@heddle/runtime';
import { beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from './run-options.js';
import { SimulatedRuntime } from './sim-runtime.js';

const EXAMPLES = join(import.meta.dirname, '..', '..', '..', 'examples');
let workload: RuntimeWorkload;
const host = { nodeId: '0123456789abcdef0123456789abcdef', dataDir: '/tmp/x' };

beforeAll(async () => {
  const signer = generateKeyPair();
  const dir = mkdtempSync(join(tmpdir(), 'hollow-sim-'));
  await buildCogPackage(join(EXAMPLES, 'native-cog'), join(dir, 'pkg'), { keys: [signer] });
  const trust = parseTrust(
    JSON.stringify({
      schema: 'heddle.trust.v1',
      keys: [{ id: 'p', role: 'publisher', public_key: Buffer.from(signer.publicKey).toString('hex') }],
    }),
  );
  const store = new VerifiedPackageStore({
    dir: join(dir, 'store'),
    anchors: trust,
    revocations: NO_REVOCATIONS,
  });
  workload = workloadFromPackage(await store.add(join(dir, 'pkg')));
});

const config = (label: string) => ({ values: { label }, runMode: { type: 'listener' as const }, host });

describe('SimulatedRuntime', () => {
  it('admits the variant of this arch and route, and refuses a route the package lacks', async () => {
    const native = new SimulatedRuntime({ route: 'native' });
    const a = await native.admit(workload);
    expect(a.variant).toBe(`${hostCogArch()}-native`);
    const wasi = new SimulatedRuntime({ route: 'wasi' });
    await expect(wasi.admit(workload)).rejects.toMatchObject({ code: 'admission', field: 'variants' });
  });

  it('loads (config checked against the schema), starts, stops and unloads', async () => {
    const rt = new SimulatedRuntime({ route: 'native' });
    await expect(rt.load(workload, config('x'.repeat(40)))).rejects.toMatchObject({ code: 'invalid_config' });
    const h = await rt.load(workload, config('a'));
    expect((await rt.status(h)).state).toBe('loaded');
    await rt.start(h);
    expect((await rt.status(h)).state).toBe('running');
    await expect(rt.unload(h)).rejects.toMatchObject({ code: 'runtime' });
    const ev = await rt.stop(h, 100);
    expect(ev.signal).toBe('SIGTERM');
    await rt.unload(h);
    expect((await rt.status(h)).state).toBe('unknown');
    await expect(rt.adopt(h, workload)).rejects.toMatchObject({ code: 'unknown_instance' });
  });

  it('takes the start latency', async () => {
    const rt = new SimulatedRuntime({ route: 'native', startLatencyMs: 60 });
    const h = await rt.load(workload, config('lat'));
    const t = performance.now();
    await rt.start(h);
    expect(performance.now() - t).toBeGreaterThanOrEqual(55);
  });

  it('fails starts at the failure rate, the same ones for the same seed', async () => {
    const run = async (seed: number): Promise<boolean[]> => {
      const rt = new SimulatedRuntime({ route: 'native', failureRate: 0.3, random: seededRandom(seed) });
      const out: boolean[] = [];
      for (let i = 0; i < 1000; i++) {
        const h = await rt.load(workload, config(`i${i}`));
        out.push(
          await rt.start(h).then(
            () => true,
            (e: unknown) => {
              expect(e).toBeInstanceOf(RuntimeError);
              expect(e).toMatchObject({ code: 'runtime' });
              return false;
            },
          ),
        );
      }
      expect(rt.failedStarts).toBe(out.filter((ok) => !ok).length);
      return out;
    };
    const a = await run(42);
    const failed = a.filter((ok) => !ok).length;
    // Binomial(1000, 0.3): mean 300, sd 14.5; +-5 sd.
    expect(failed).toBeGreaterThan(227);
    expect(failed).toBeLessThan(373);
    expect(await run(42)).toEqual(a);
    expect(await run(43)).not.toEqual(a);
  });

  it('refuses a failure rate or latency out of range', () => {
    expect(() => new SimulatedRuntime({ route: 'native', failureRate: 1.5 })).toThrow(/failureRate/);
    expect(() => new SimulatedRuntime({ route: 'native', startLatencyMs: -1 })).toThrow(/startLatencyMs/);
  });
});
