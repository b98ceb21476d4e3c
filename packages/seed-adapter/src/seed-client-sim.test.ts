import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SeedError } from './errors.js';
import { SeedClient } from './seed-client.js';
import { SeedSimulator } from './simulator/seed-simulator.js';
import { type SelfSignedCert, selfSignedCert } from './test-tls.js';

let cert: SelfSignedCert;
let sim: SeedSimulator;
let token: string;
let client: SeedClient;

beforeAll(async () => {
  cert = selfSignedCert('seed');
  sim = await SeedSimulator.start({
    https: { cert: cert.cert, key: cert.key },
    installDelayMs: 20,
    tickMs: 20,
  });
  token = sim.addToken();
  client = new SeedClient({ url: sim.url, spki: cert.spki, token });
});
afterAll(() => sim.close());

async function code(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SeedError);
  expect((err as Error).message).not.toContain(token);
  return (err as SeedError).code;
}

describe('SeedClient against the simulator (pinned HTTPS)', () => {
  it('drives the whole API', async () => {
    expect((await client.identity()).device_id).toBeTypeOf('string');
    const store = await client.available();
    const first = store[0];
    if (first === undefined) throw new Error('empty store');
    await client.install(first.id);
    const inst = await client.installed();
    expect(inst.find((c) => c.id === first.id)?.version).toBe(first.version);
    await client.stop(first.id);
    expect((await client.installed()).find((c) => c.id === first.id)?.running).toBe(false);
    await client.start(first.id);
    const logs = await client.logs(first.id, 5);
    expect(Array.isArray(logs.output)).toBe(true);
    await client.stop(first.id);
    expect((await client.manifest(first.id)).allowedCommands).toContain('--once');
    const out = await client.console(first.id, '--once');
    expect(out.output).toHaveLength(1);
    expect(out.exit_code).toBe(0);
    expect(await client.getConfig(first.id)).toEqual({});
    await client.setConfig(first.id, { interval: 2 });
    await client.setConfig(first.id, { sensor_source: 'csi' });
    expect(await client.getConfig(first.id)).toEqual({ interval: 2, sensor_source: 'csi' });
    expect(await code(client.setConfig(first.id, { interval: 0 }))).toBe('seed_error');
    await client.verifyToken();
    await client.uninstall(first.id);
    expect((await client.installed()).some((c) => c.id === first.id)).toBe(false);
    expect(await code(client.start(first.id))).toBe('seed_error');
    for (const r of sim.requests) expect(r.path).not.toContain(token);
  });

  it('refuses the simulator answering garbage or huge bodies', async () => {
    sim.garbageOn('/api/v1/status');
    expect(await code(client.status())).toBe('bad_answer');
    sim.clearFaults();
    sim.hugeOn('/api/v1/status');
    expect(await code(client.status())).toBe('bad_answer');
    sim.clearFaults();
    expect((await client.status()).device_id).toBe(sim.deviceId);
  });

  it('refuses the simulator under another key', async () => {
    const other = selfSignedCert('seed');
    const c = new SeedClient({ url: sim.url, spki: other.spki, token });
    const before = sim.requests.length;
    expect(await code(c.installed())).toBe('tls_pin');
    expect(sim.requests.length).toBe(before);
  });
});
