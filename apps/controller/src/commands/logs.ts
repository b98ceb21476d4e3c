import { setTimeout as sleep } from 'node:timers/promises';
import { positional } from '@heddle/cli-kit';
import { ExitCode } from '../cli-error.js';
import { intFlag } from '../command-def.js';
import { LOGS } from '../defs/instances.js';
import type { CliIo } from '../io.js';
import { runOperator } from '../operator.js';

/** How often `logs --follow` asks again, in ms. */
export const FOLLOW_INTERVAL_MS = 1000;

const same = (a: readonly string[], ai: number, b: readonly string[], bi: number, n: number): boolean => {
  for (let k = 0; k < n; k += 1) if (a[ai + k] !== b[bi + k]) return false;
  return true;
};

/**
 * The lines of `next` that are new since `prev`, both being the tail of the same output. When `next`
 * holds all of `prev` (the output is still shorter than the window), what follows its first
 * occurrence is new; otherwise the window slid, and what follows the longest suffix of `prev` that
 * starts `next` is new; with no overlap at all, every line of `next` is new.
 */
export function newLines(prev: readonly string[], next: readonly string[]): string[] {
  if (prev.length === 0) return [...next];
  for (let i = 0; i + prev.length <= next.length; i += 1) {
    if (same(next, i, prev, 0, prev.length)) return next.slice(i + prev.length);
  }
  for (let m = Math.min(prev.length, next.length); m > 0; m -= 1) {
    if (same(prev, prev.length - m, next, 0, m)) return next.slice(m);
  }
  return [...next];
}

/** `heddle logs <instance> [--lines N] [--follow]`. */
export function logs(args: readonly string[], io: CliIo): Promise<number> {
  return runOperator(LOGS, args, io, async (ctx) => {
    const id = positional(ctx.parsed, 0);
    const lines = intFlag('lines', ctx.parsed.strings.lines, 1, 10_000);
    const client = ctx.client();
    const first = await client.logs(id, lines);
    ctx.emit(first, () => first.lines);
    if (ctx.parsed.booleans.follow !== true) return ExitCode.ok;
    const { signal, release } = interruptSignal(io);
    try {
      const window = Math.max(lines ?? 100, 1000);
      let prev: readonly string[] = first.lines;
      while (!signal.aborted) {
        try {
          await sleep(FOLLOW_INTERVAL_MS, undefined, { signal });
        } catch {
          break;
        }
        const next = await client.logs(id, window);
        const fresh = newLines(prev, next.lines);
        prev = next.lines;
        if (fresh.length > 0) ctx.emit({ ...next, lines: fresh }, () => fresh);
      }
    } finally {
      release();
    }
    return ExitCode.ok;
  });
}

/** The operator's interrupt: `io.signal` when given, else SIGINT of this process (until released). */
function interruptSignal(io: CliIo): { signal: AbortSignal; release: () => void } {
  if (io.signal !== undefined) return { signal: io.signal, release: () => {} };
  const ac = new AbortController();
  const onInt = (): void => ac.abort();
  process.once('SIGINT', onInt);
  return { signal: ac.signal, release: () => process.off('SIGINT', onInt) };
}
