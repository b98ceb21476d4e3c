import { z } from 'zod';

/** How a cog instance runs: once to completion, every `secs` seconds, or continuously (a listener). */
export type RunMode =
  | { readonly type: 'once' }
  | { readonly type: 'interval'; readonly secs: number }
  | { readonly type: 'listener' };

/** The run mode types. */
export const RUN_MODE_TYPES: readonly ['once', 'interval', 'listener'] = [
  'once',
  'interval',
  'listener',
] as const;

/** The longest interval between runs, in seconds (one day). */
export const MAX_INTERVAL_SECS = 86_400;

/**
 * Schema of a run mode from untrusted input: `{"type":"once"}`, `{"type":"listener"}` or
 * `{"type":"interval","secs":N}` with N an integer from 1 to {@link MAX_INTERVAL_SECS}; no other keys.
 */
export const RunModeSchema: z.ZodType<RunMode> = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('once') }),
  z.strictObject({ type: z.literal('interval'), secs: z.int().min(1).max(MAX_INTERVAL_SECS) }),
  z.strictObject({ type: z.literal('listener') }),
]);
