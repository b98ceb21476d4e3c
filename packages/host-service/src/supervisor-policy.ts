import { HostServiceError } from './errors.js';

/** Timing and restart budget of a host's supervisor (every field optional; defaults below). */
export interface SupervisorOptions {
  /** Time between health checks (ms): default 1000. */
  readonly intervalMs?: number;
  /** Most supervisor restarts of one instance per rolling window: default 3. 0: never restart. */
  readonly maxRestarts?: number;
  /** The rolling window of the budget (ms): default 10 minutes. */
  readonly windowMs?: number;
  /** Wait before the first restart (ms), doubled for each further restart in the window: default 1000. */
  readonly backoffInitialMs?: number;
  /** Longest wait before a restart (ms): default 30000. */
  readonly backoffMaxMs?: number;
  /** Relative jitter applied to each wait, 0..1: default 0.2 (+-20%). */
  readonly jitter?: number;
  /** Uniform random numbers in [0, 1) for the jitter: default `Math.random` (tests pass a seeded one). */
  readonly random?: () => number;
  /** Time after a start before a listener's readiness is probed (ms): default 10000. */
  readonly readinessGraceMs?: number;
  /** Failed readiness probes in a row that make a listener unhealthy: default 3. */
  readonly readinessMisses?: number;
  /** Grace between SIGTERM and the hard kill when the supervisor or the lease stops an instance (ms): default 5000. */
  readonly stopGraceMs?: number;
}

/** A {@link SupervisorOptions} with every default filled in. */
export type SupervisorPolicy = Required<SupervisorOptions>;

/** The defaults (docs/host.md, "Supervision and the controller lease"): checks every 1 s; 3 restarts per 10 minutes; 1 s doubling to 30 s, +-20%. */
export const DEFAULT_SUPERVISOR_POLICY: Readonly<SupervisorPolicy> = Object.freeze({
  intervalMs: 1_000,
  maxRestarts: 3,
  windowMs: 600_000,
  backoffInitialMs: 1_000,
  backoffMaxMs: 30_000,
  jitter: 0.2,
  random: Math.random,
  readinessGraceMs: 10_000,
  readinessMisses: 3,
  stopGraceMs: 5_000,
});

const INTEGER_BOUNDS: Readonly<
  Record<Exclude<keyof SupervisorPolicy, 'jitter' | 'random'>, [number, number]>
> = {
  intervalMs: [1, 3_600_000],
  maxRestarts: [0, 1_000_000],
  windowMs: [1, 31 * 86_400_000],
  backoffInitialMs: [0, 86_400_000],
  backoffMaxMs: [0, 86_400_000],
  readinessGraceMs: [0, 86_400_000],
  readinessMisses: [1, 1_000_000],
  stopGraceMs: [0, 120_000],
};

/**
 * `options` with the defaults filled in. Throws `HostServiceError` `invalid_config` naming the field
 * (`supervisor.<field>`) for a value out of its bounds or a `backoffMaxMs` below `backoffInitialMs`.
 */
export function supervisorPolicy(options: SupervisorOptions = {}): SupervisorPolicy {
  const p: SupervisorPolicy = { ...DEFAULT_SUPERVISOR_POLICY };
  for (const [key, value] of Object.entries(options)) {
    // cast: copy each given option onto the defaults by its key (the keys are SupervisorOptions').
    if (value !== undefined) (p as unknown as Record<string, unknown>)[key] = value;
  }
  const bad = (field: string, why: string): never => {
    throw new HostServiceError('invalid_config', `supervisor.${field}: ${why}`, {
      field: `supervisor.${field}`,
    });
  };
  for (const [field, [lo, hi]] of Object.entries(INTEGER_BOUNDS)) {
    // cast: Object.keys of INTEGER_BOUNDS are its keys.
    const v = p[field as keyof typeof INTEGER_BOUNDS];
    if (!Number.isSafeInteger(v) || v < lo || v > hi)
      bad(field, `expected an integer from ${lo} to ${hi}, got ${v}`);
  }
  if (!(p.jitter >= 0 && p.jitter <= 1)) bad('jitter', `expected a number from 0 to 1, got ${p.jitter}`);
  if (typeof p.random !== 'function') bad('random', 'expected a function');
  if (p.backoffMaxMs < p.backoffInitialMs) bad('backoffMaxMs', 'must not be below backoffInitialMs');
  return p;
}

/**
 * The wait before restart number `previous + 1` of a window that already holds `previous` restarts:
 * `backoffInitialMs * 2^previous`, at most `backoffMaxMs`, then scaled by a factor drawn uniformly
 * from `1 - jitter .. 1 + jitter` (rounded to whole ms, never negative).
 */
export function restartDelayMs(previous: number, policy: SupervisorPolicy): number {
  const base = Math.min(policy.backoffMaxMs, policy.backoffInitialMs * 2 ** Math.min(previous, 52));
  const factor = 1 + policy.jitter * (2 * policy.random() - 1);
  return Math.max(0, Math.round(base * factor));
}

/**
 * A small seeded generator of uniform numbers in [0, 1) (mulberry32), for reproducible jitter in
 * tests and fault-injection trials.
 */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
