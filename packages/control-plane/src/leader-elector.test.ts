import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCutProxy } from './cut-proxy.js';
import { LeaderElector } from './leader-elector.js';
import { PgLeaderLease } from './pg-leader-lease.js';
import { postgresSkipReason, startPostgres, type TestPostgres } from './test-postgres.js';

const A = 'a'.repeat(32);
const B = 'b'.repeat(32);
const R = 900; // the refresh period (ms) of these tests

const HAVE_PG = postgresSkipReason() === undefined;

let server: TestPostgres | undefined;
const pgUrl = (): string => server?.url ?? '';
beforeAll(async () => {
  if (HAVE_PG) server = await startPostgres();
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until `f` holds (polling every 5 ms); answers how long it took. */
async function until(f: () => boolean, ms: number, what: string): Promise<number> {
  const t0 = performance.now();
  while (!f()) {
    if (performance.now() - t0 > ms) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(5);
  }
  return performance.now() - t0;
}

const srcDir = fileURLToPath(new URL('.', import.meta.url));
const repoDir = join(srcDir, '..', '..', '..');

/** A controller's elector in a child process (`node --import tsx`), printing `leading` when it leads. */
function spawnLeader(self: string, name: string): { child: ChildProcess; leading: Promise<void> } {
  const dir = mkdtempSync(join(tmpdir(), 'heddle-leader-'));
  const file = join(dir, 'child.mts');
  writeFileSync(
    file,
    `import { LeaderElector } from ${JSON.stringify(join(srcDir, 'leader-elector.ts'))};
import { PgLeaderLease } from ${JSON.stringify(join(srcDir, 'pg-leader-lease.ts'))};
const e = new LeaderElector({
  lease: new PgLeaderLease(${JSON.stringify(pgUrl())}, { name: ${JSON.stringify(name)} }),
  self: ${JSON.stringify(self)}, refreshMs: ${R},
  onElected: async () => '${self}${self}',
  onChange: (s) => { if (s.leading) process.stdout.write('leading\\n'); },
});
e.start();
setInterval(() => {}, 1000);
`,
  );
  const loader = pathToFileURL(join(repoDir, 'node_modules/tsx/dist/loader.mjs')).href;
  const child = spawn(process.execPath, ['--import', loader, file], {
    cwd: srcDir,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const leading = new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      if (d.toString().includes('leading')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`child exited ${code}`)));
  });
  return { child, leading };
}

describe.skipIf(!HAVE_PG)('the leadership lease on PostgreSQL (a real server)', () => {
  it('grants one holder at a time; a new term raises the epoch and names the term before', async () => {
    const name = 'one-holder';
    const l1 = new PgLeaderLease(pgUrl(), { name });
    const l2 = new PgLeaderLease(pgUrl(), { name });
    expect(await l1.read()).toBeUndefined();
    const first = await l1.acquire(A, 5_000);
    expect(first).toMatchObject({ held: true, newTerm: true, row: { holder: A, epoch: 1 } });
    expect(await l1.setTermEvent(A, 1, 'e'.repeat(64))).toBe(true);
    // B is refused while A's lease runs; A renews in the same term.
    expect(await l2.acquire(B, 5_000)).toMatchObject({ held: false, row: { holder: A, epoch: 1 } });
    expect(await l1.acquire(A, 5_000)).toMatchObject({ held: true, newTerm: false, row: { epoch: 1 } });
    // Once it lapsed, concurrent attempts: exactly one wins, in term 2, naming term 1.
    await l1.release(A, 1);
    const [x, y] = await Promise.all([l1.acquire(A, 5_000), l2.acquire(B, 5_000)]);
    expect([x.held, y.held].filter(Boolean)).toHaveLength(1);
    const won = x.held ? x : y;
    expect(won.row).toMatchObject({ epoch: 2, termEvent: null });
    expect(won.previous).toMatchObject({ holder: A, epoch: 1, termEvent: 'e'.repeat(64) });
    // A holder of an old term cannot write into the new one.
    expect(await l1.setTermEvent(A, 1, 'f'.repeat(64))).toBe(false);
    await l1.close();
    await l2.close();
  });

  it('a leader killed with SIGKILL is replaced within two refresh periods; the new term names it', async () => {
    const name = 'kill-leader';
    const a = spawnLeader(A, name);
    try {
      await a.leading;
      const terms: unknown[] = [];
      const eb = new LeaderElector({
        lease: new PgLeaderLease(pgUrl(), { name }),
        self: B,
        refreshMs: R,
        onElected: async (t) => {
          terms.push(t.previous);
          return B.repeat(2);
        },
      });
      eb.start();
      await sleep(R); // B follows for a while: A keeps it
      expect(eb.isLeader()).toBe(false);
      expect(eb.status()).toMatchObject({ leading: false, leader: A, epoch: 1 });
      const killedAt = performance.now();
      a.child.kill('SIGKILL');
      await until(() => eb.isLeader(), 4 * R, 'B leads');
      const took = performance.now() - killedAt;
      // The lease lasts R from A's last refresh, B tries every R/3: at most R + R/3 (+ a query).
      expect(took).toBeLessThan(2 * R);
      expect(terms).toEqual([{ holder: A, epoch: 1, event: A.repeat(2) }]);
      await eb.stop();
    } finally {
      a.child.kill('SIGKILL');
    }
  }, 30_000);

  it('a leader cut off from the database stops leading before another can be granted the lease', async () => {
    if (server === undefined) return;
    const name = 'cut-off';
    const proxy = await startCutProxy(server);
    const aChanges: { leading: boolean; at: number; wall: number; actsUntilMs: number }[] = [];
    const ea = new LeaderElector({
      lease: new PgLeaderLease(proxy.url, { name }),
      self: A,
      refreshMs: R,
      onChange: (s) =>
        aChanges.push({
          leading: s.leading,
          at: performance.now(),
          wall: Date.now(),
          actsUntilMs: s.actsUntilMs,
        }),
    });
    const eb = new LeaderElector({ lease: new PgLeaderLease(pgUrl(), { name }), self: B, refreshMs: R });
    // Sampled every 2 ms: both must never lead at once.
    let overlap = 0;
    let cutAt = 0;
    let aLost = 0;
    let bWon = 0;
    const sampler = setInterval(() => {
      const la = ea.isLeader();
      const lb = eb.isLeader();
      if (la && lb) overlap++;
      if (!la && aLost === 0 && bWon === 0 && cutAt > 0) aLost = performance.now();
      if (lb && bWon === 0) bWon = performance.now();
    }, 2);
    try {
      ea.start();
      await until(() => ea.isLeader(), 5_000, 'A leads');
      eb.start();
      await sleep(R);
      expect(ea.isLeader()).toBe(true);
      // While it leads, its own count runs into the future.
      expect(ea.status().actsUntilMs).toBeGreaterThan(Date.now());
      const cutWall = Date.now();
      cutAt = performance.now();
      proxy.cut('hang'); // A's connection stays open but nothing passes
      await until(() => eb.isLeader(), 4 * R, 'B leads');
      // The fault landed: A's refresh in flight at the cut fails (a timeout), and A stays out.
      await until(() => ea.status().lastError !== null, 5_000, "A's refresh fails");
      expect(ea.isLeader()).toBe(false);
      expect(overlap).toBe(0);
      expect(aLost).toBeGreaterThan(cutAt);
      expect(bWon).toBeGreaterThan(aLost);
      expect(bWon - cutAt).toBeLessThan(2 * R);
      // A told of its loss when its own count ran out, before B won (its hung refresh was still out).
      const lost = aChanges.find((c) => !c.leading && c.at > cutAt);
      expect(lost?.at).toBeLessThan(bWon);
      // The loss says when A stopped acting as leader (its own count): after the cut, by the time it
      // was told, and before B won.
      expect(lost?.actsUntilMs).toBeGreaterThan(cutWall);
      expect(lost?.actsUntilMs).toBeLessThanOrEqual((lost?.wall ?? 0) + 1);
      expect(lost?.actsUntilMs).toBeLessThan(cutWall + (bWon - cutAt));
      // A back on the database follows B.
      proxy.heal();
      await until(() => ea.status().leader === B && ea.status().lastError === null, 6 * R, 'A follows');
      expect(ea.isLeader()).toBe(false);
    } finally {
      clearInterval(sampler);
      await ea.stop();
      await eb.stop();
      await proxy.close();
    }
  }, 30_000);
});
