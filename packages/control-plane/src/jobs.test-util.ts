// Helpers of the job tests (not exported from the package): real hosts on loopback, a plane on a test
// clock, ticking until a condition holds, and (from the testing entry) a native cog package that fails at once.
import { expect } from 'vitest';
import type { JobInstanceView } from './job-ops.js';
import { openPlane, startHost, type TestHost, type TestPlane } from './test-fixtures.js';

/**
 * Short liveness tunables (a node unreachable for 1 s is dead; the tests move the clock) and generous
 * call timeouts, so that a loaded machine (load average 30+) slows a live host's answers without
 * making it unreachable.
 */
export const JOB_TUNABLES = {
  deadAfterMs: 1_000,
  suspectAfterMs: 500,
  callTimeoutMs: 30_000,
  healthTimeoutMs: 30_000,
  reconcileTimeoutMs: 30_000,
  placeTimeoutMs: 60_000,
};

/** Real time plus an offset the test moves forward. */
export class Clock {
  offset = 0;
  readonly now = (): number => Date.now() + this.offset;
  advance(ms: number): void {
    this.offset += ms;
  }
}

/** Things to close after each test, last opened first. */
export const opened: { close(): Promise<void> }[] = [];

/** Closes everything {@link opened} (an `afterEach`). */
export async function closeOpened(): Promise<void> {
  for (const x of opened.splice(0).reverse()) await x.close().catch(() => undefined);
}

/** `n` hosts with `routes`, closed after the test. */
export async function hosts(
  n: number,
  routes: readonly ('native' | 'wasi')[] = ['wasi'],
  options: Parameters<typeof startHost>[3] = {},
): Promise<TestHost[]> {
  const out: TestHost[] = [];
  for (let i = 0; i < n; i++) {
    const h = await startHost(routes, undefined, 0, options);
    opened.push(h);
    out.push(h);
  }
  return out;
}

/** A plane on `clock` that knows `hs` (tier paired). */
export async function planeWith(hs: readonly TestHost[], clock: Clock): Promise<TestPlane> {
  const p = await openPlane(undefined, JOB_TUNABLES, clock.now);
  opened.push(p);
  for (const h of hs) await p.plane.addNode(h.url, { tier: 'paired' });
  return p;
}

/** Ticks until `done` holds (at most `max` ticks), then asserts it. */
export async function tickUntil(p: TestPlane, done: () => boolean, max = 8, pauseMs = 0): Promise<void> {
  for (let i = 0; i < max && !done(); i++) {
    await p.plane.tick();
    if (pauseMs > 0 && !done()) await new Promise((r) => setTimeout(r, pauseMs));
  }
  expect(done()).toBe(true);
}

/** The running instances of the job's desired version. */
export function runningOf(p: TestPlane, job: string): JobInstanceView[] {
  const j = p.plane.job(job);
  return j.instances.filter((i) => i.state === 'running' && i.version === j.version);
}

/** hello-cog as a native-only package (see `nativePackage` of the testing entry). */
export { nativePackage } from './test-native-package.js';
