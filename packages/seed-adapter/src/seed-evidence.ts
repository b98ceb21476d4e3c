import type { RunEvidence } from '@heddle/runtime';
import type { CogLogs, ConsoleResult } from './seed-api.js';

/** Bounds of what the Seed adapter keeps as evidence: lines asked of the Seed and bytes per stream. */
export interface SeedEvidenceLimits {
  /** Lines of a cog's logs asked for at stop (default 200). */
  readonly lines: number;
  /** Bytes kept of each stream, the tail (default 64 KiB). */
  readonly bytes: number;
}

/** The default {@link SeedEvidenceLimits}. */
export const SEED_EVIDENCE_LIMITS: SeedEvidenceLimits = { lines: 200, bytes: 64 * 1024 };

/** The tail of `lines` joined with newlines, at most `bytes` UTF-8 bytes, and how many bytes were dropped. */
export function tailText(lines: readonly string[], bytes: number): { text: string; dropped: number } {
  const full = lines.length === 0 ? '' : `${lines.join('\n')}\n`;
  const buf = Buffer.from(full, 'utf8');
  if (buf.length <= bytes) return { text: full, dropped: 0 };
  let start = buf.length - bytes;
  // Do not start inside a UTF-8 sequence.
  while (start < buf.length && ((buf[start] ?? 0) & 0xc0) === 0x80) start++;
  return { text: buf.subarray(start).toString('utf8'), dropped: start };
}

/** What the evidence of one stop or console run is built from. */
export interface SeedRunFacts {
  readonly instanceId: string;
  readonly args: readonly string[];
  readonly exitCode: number | null;
  readonly startedAtMs: number | null;
  readonly endedAtMs: number;
  readonly output: readonly string[];
  readonly errors: readonly string[];
  readonly notes: readonly string[];
}

/** Run evidence from what the Seed reported (its cog's output and errors as stdout and stderr). */
export function seedEvidence(facts: SeedRunFacts, limits: SeedEvidenceLimits): RunEvidence {
  const out = tailText(facts.output, limits.bytes);
  const err = tailText(facts.errors, limits.bytes);
  return {
    instanceId: facts.instanceId,
    args: [...facts.args],
    exitCode: facts.exitCode,
    signal: null,
    startedAtMs: facts.startedAtMs,
    endedAtMs: facts.endedAtMs,
    killed: false,
    stdout: out.text,
    stdoutTruncatedBytes: out.dropped,
    stderr: err.text,
    stderrTruncatedBytes: err.dropped,
    notes: [...facts.notes],
  };
}

/** The logs of a stop, or none with a note when the Seed did not give them. */
export function logsOrNote(logs: CogLogs | Error): {
  output: readonly string[];
  errors: readonly string[];
  notes: string[];
} {
  if (logs instanceof Error) return { output: [], errors: [], notes: [`logs unavailable: ${logs.message}`] };
  return { output: logs.output, errors: logs.errors, notes: [] };
}

/** The exit code a console run reported, when it is an integer. */
export function consoleExitCode(r: ConsoleResult): number | null {
  const c = r.exit_code;
  return typeof c === 'number' && Number.isSafeInteger(c) ? c : null;
}

/** A cog's log lines as `logs` returns them: output, then errors prefixed `[error] `, the last `lines`. */
export function logLines(logs: CogLogs, lines: number): string[] {
  return [...logs.output, ...logs.errors.map((l) => `[error] ${l}`)].slice(-lines);
}
