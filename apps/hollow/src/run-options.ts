import { isAbsolute, resolve } from 'node:path';
import { badInput, type ParsedArgs } from '@heddle/cli-kit';
import { HEX64_RE } from '@heddle/envelope';
import { z } from 'zod';

/** What `heddle-hollow run` was asked for, checked. */
export interface RunOptions {
  readonly dir: string;
  readonly count: number;
  readonly controllers: readonly string[];
  readonly trust: string;
  readonly policy: string | undefined;
  readonly routes: readonly ('native' | 'wasi')[];
  readonly tier: 'discovered' | 'paired' | 'pinned';
  readonly startLatencyMs: number;
  readonly failureRate: number;
  readonly seed: number | undefined;
  readonly chain: 'file' | 'memory';
  readonly listen: string;
  readonly enrol: string | undefined;
  readonly leaseSecs: number | undefined;
}

const num = (min: number, max: number, int: boolean) =>
  z
    .string()
    .regex(/^\d+(\.\d+)?$/, 'expected a number')
    .transform(Number)
    .pipe(int ? z.number().int().min(min).max(max) : z.number().min(min).max(max));

const Schema = z.strictObject({
  count: num(1, 20_000, true),
  controllers: z.array(z.string().regex(HEX64_RE, 'expected 64 hex characters')),
  routes: z
    .string()
    .transform((s) => s.split(',').filter((r) => r !== ''))
    .pipe(
      z
        .array(z.enum(['native', 'wasi']))
        .min(1)
        .refine((a) => new Set(a).size === a.length, 'a route is named twice'),
    ),
  tier: z.enum(['discovered', 'paired', 'pinned']),
  startLatencyMs: num(0, 600_000, false),
  failureRate: num(0, 1, false),
  seed: num(0, 2 ** 32 - 1, true).optional(),
  chain: z.enum(['file', 'memory']),
  listen: z.string().min(1).max(255),
  leaseSecs: num(1, 86_400, true).optional(),
});

const FLAG: Readonly<Record<string, string>> = {
  count: 'count',
  controllers: 'controller',
  routes: 'routes',
  tier: 'tier',
  startLatencyMs: 'start-latency-ms',
  failureRate: 'failure-rate',
  seed: 'seed',
  chain: 'chain',
  listen: 'listen',
  leaseSecs: 'controller-lease-secs',
};

/** Checks the flags of `run` with zod; a bad one is refused (`bad_flag`, exit 3) naming the flag. */
export function runOptions(a: ParsedArgs, cwd: string): RunOptions {
  const s = a.strings;
  const r = Schema.safeParse({
    count: s.count,
    controllers: a.lists.controller ?? [],
    routes: s.routes,
    tier: s.tier,
    startLatencyMs: s['start-latency-ms'],
    failureRate: s['failure-rate'],
    ...(s.seed === undefined ? {} : { seed: s.seed }),
    chain: s.chain,
    listen: s.listen,
    ...(s['controller-lease-secs'] === undefined ? {} : { leaseSecs: s['controller-lease-secs'] }),
  });
  if (!r.success) {
    const issue = r.error.issues[0];
    const key = String(issue?.path[0] ?? 'count');
    const flag = FLAG[key] ?? key;
    throw badInput('bad_flag', `--${flag}: ${issue?.message ?? 'invalid'}`, flag);
  }
  const abs = (p: string): string => (isAbsolute(p) ? p : resolve(cwd, p));
  return {
    ...r.data,
    dir: abs(s.dir ?? 'hollow'),
    // cast: `trust` is a required flag: parseArgv refused the command without it
    trust: abs(s.trust as string),
    policy: s.policy === undefined ? undefined : abs(s.policy),
    seed: r.data.seed,
    leaseSecs: r.data.leaseSecs,
    enrol: s.enrol === undefined ? undefined : abs(s.enrol),
  };
}

/** A seeded generator of numbers in [0, 1) (mulberry32), for reproducible failure dice. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
