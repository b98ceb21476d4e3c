import type { RunEvidence } from '@heddle/runtime';
import { keyValues } from './table.js';

/** A run's evidence as JSON for `--json` (already bounded and redacted by the host). */
export function evidenceJson(e: RunEvidence): Record<string, unknown> {
  return {
    instance_id: e.instanceId,
    args: e.args,
    exit_code: e.exitCode,
    started_at_ms: e.startedAtMs,
    ended_at_ms: e.endedAtMs,
    stdout: e.stdout,
    stdout_truncated_bytes: e.stdoutTruncatedBytes,
    stderr: e.stderr,
    stderr_truncated_bytes: e.stderrTruncatedBytes,
    notes: e.notes,
    stopped_for_console: e.stoppedForConsole ?? [],
  };
}

/** A run's evidence for people: a summary, then the output and errors tails. */
export function evidenceLines(title: string, e: RunEvidence): string[] {
  const indent = (text: string): string[] =>
    text === ''
      ? ['  (none)']
      : text
          .replace(/\n$/, '')
          .split('\n')
          .map((l) => `  ${l}`);
  return [
    ...keyValues([
      [title, e.instanceId],
      ['exit code', e.exitCode === null ? '-' : String(e.exitCode)],
      ...(e.stoppedForConsole !== undefined && e.stoppedForConsole.length > 0
        ? ([['preempted', e.stoppedForConsole.join(', ')]] as const)
        : []),
      ...(e.notes.length > 0 ? ([['notes', e.notes.join('; ')]] as const) : []),
    ]),
    `output${e.stdoutTruncatedBytes > 0 ? ` (first ${e.stdoutTruncatedBytes} bytes dropped)` : ''}:`,
    ...indent(e.stdout),
    `errors${e.stderrTruncatedBytes > 0 ? ` (first ${e.stderrTruncatedBytes} bytes dropped)` : ''}:`,
    ...indent(e.stderr),
  ];
}
