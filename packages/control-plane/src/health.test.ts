import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CheckedLiveness, mapBounded, withDeadline } from './health.js';
import { examplePackage, openPlane, startHost, type TestHost, type TestPlane } from './test-fixtures.js';

describe('CheckedLiveness', () => {
  it('follows the checks only: silence the controller did not ask about does not count', () => {
    const l = new CheckedLiveness(1_000);
    expect(l.get('n', 0)).toBe('unknown');
    l.contact('n', 0);
    expect(l.get('n', 1_000_000)).toBe('alive');
    l.failure('n', 2_000);
    expect(l.get('n', 2_500)).toBe('suspect');
    l.failure('n', 2_900); // the first failure counts
    expect(l.get('n', 3_000)).toBe('dead');
    l.contact('n', 3_100);
    expect(l.get('n', 3_100)).toBe('alive');
  });
});

describe('mapBounded and withDeadline', () => {
  it('runs at most `concurrency` at once, results in order', async () => {
    let running = 0;
    let most = 0;
    const out = await mapBounded([1, 2, 3, 4, 5, 6, 7], 3, async (x) => {
      most = Math.max(most, ++running);
      await new Promise((r) => setTimeout(r, 5));
      running--;
      return x * 2;
    });
    expect(out).toEqual([2, 4, 6, 8, 10, 12, 14]);
    expect(most).toBe(3);
  });

  it('rejects at the deadline', async () => {
    await expect(withDeadline(new Promise(() => {}), 20, 'late')).rejects.toThrow('late');
    await expect(withDeadline(Promise.resolve(1), 20, 'late')).resolves.toBe(1);
  });
});

// Issue 15 item 10: a host that accepts connections and never answers (a frozen process) costs its
// own check the health timeout; the other nodes stay alive and places go on.
describe('one frozen host', () => {
  let a: TestHost;
  let b: TestHost;
  let frozen: TestHost;
  let p: TestPlane;
  let silent: Server;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    a = await startHost(['wasi']);
    b = await startHost(['wasi']);
    frozen = await startHost(['wasi']);
    p = await openPlane(undefined, { deadAfterMs: 3_000, suspectAfterMs: 3_000, healthTimeoutMs: 600 });
    for (const h of [a, b, frozen]) await p.plane.addNode(h.url, { tier: 'paired' });
    // The frozen host: its port accepts TCP connections (as a SIGSTOPped process's kernel does) and
    // never answers.
    await frozen.server.close();
    silent = createServer((s) => {
      sockets.push(s);
      s.on('error', () => {});
    });
    await new Promise<void>((r) => silent.listen(Number(new URL(frozen.url).port), '127.0.0.1', r));
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => silent.close(r));
    await p.close();
    await a.close();
    await b.close();
    await frozen.service.shutdown(100).catch(() => {});
    await frozen.chain.close();
  });

  it('stalls only its own check: the tick is quick, the others stay alive, places succeed', async () => {
    const started = Date.now();
    const report = await p.plane.tick();
    const took = Date.now() - started;
    expect(took).toBeLessThan(2_500); // about the health timeout, not the 10 s of a connect timeout
    expect([...report.reachable].sort()).toEqual([a.service.nodeId, b.service.nodeId].sort());
    expect(p.plane.node(frozen.service.nodeId).liveness).toBe('suspect');
    // Past dead_after of the frozen host's failures, it alone is dead.
    await new Promise((r) => setTimeout(r, 3_000));
    await p.plane.tick();
    expect(p.plane.node(frozen.service.nodeId).liveness).toBe('dead');
    expect(p.plane.node(a.service.nodeId).liveness).toBe('alive');
    expect(p.plane.node(b.service.nodeId).liveness).toBe('alive');
    const r = await p.plane.place({ package_dir: await examplePackage('wasi-cog'), start: false });
    expect(r.status).toBe('placed');
    expect([a.service.nodeId, b.service.nodeId]).toContain(r.instance?.node_id);
  }, 30_000);
});
