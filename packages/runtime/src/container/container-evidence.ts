import type { RunEvidence } from '../contract.js';
import { RuntimeError } from '../errors.js';
import { type ContainerEngine, runEngine } from './container-engine.js';
import {
  type ContainerInspect,
  mergeTimestampedLogs,
  parseInspect,
  signalOfExitCode,
} from './container-inspect.js';

/** Bounds of the output kept as evidence. */
export interface ContainerEvidenceLimits {
  /** Lines of each stream (`logs --tail`). */
  readonly lines: number;
  /** Bytes of each stream. */
  readonly bytes: number;
}

/** The container's `inspect`, or undefined when the engine does not know it. */
export async function inspectContainer(
  engine: ContainerEngine,
  name: string,
): Promise<ContainerInspect | undefined> {
  const r = await runEngine(engine, ['inspect', '--type', 'container', '--format', 'json', name], {
    timeoutMs: 15_000,
  });
  return r.code === 0 ? parseInspect(r.stdout) : undefined;
}

/**
 * The evidence of the container's last run: exit code (`128+n` as signal n), timings and the note
 * `memory limit exceeded` from `ins`, and the tail of both streams from `logs --tail`.
 */
export async function containerEvidence(
  engine: ContainerEngine,
  name: string,
  instanceId: string,
  ins: ContainerInspect | undefined,
  args: readonly string[],
  limits: ContainerEvidenceLimits,
): Promise<RunEvidence> {
  const r = await runEngine(engine, ['logs', '--tail', String(limits.lines), name], {
    maxBytes: limits.bytes,
    timeoutMs: 15_000,
  });
  const started = ins?.startedAtMs ?? null;
  const code = started === null || ins === undefined ? null : ins.exitCode;
  const signal = code === null ? null : signalOfExitCode(code);
  const notes: string[] = [];
  if (ins?.oomKilled === true) notes.push('memory limit exceeded');
  if (ins === undefined) notes.push('container not found');
  return {
    instanceId,
    args,
    exitCode: signal === null ? code : null,
    signal,
    startedAtMs: started,
    endedAtMs: ins?.finishedAtMs ?? null,
    killed: false,
    stdout: r.code === 0 ? r.stdout : '',
    stdoutTruncatedBytes: r.stdoutTruncated,
    stderr: r.code === 0 ? r.stderr : '',
    stderrTruncatedBytes: r.stderrTruncated,
    notes,
  };
}

/**
 * The last `lines` (0 to 10 000) lines of both streams of the container, merged by timestamp
 * (`logs --timestamps --tail N`); `runtime` when the engine refuses.
 */
export async function containerLogLines(
  engine: ContainerEngine,
  name: string,
  lines: number,
): Promise<readonly string[]> {
  const n = Math.max(0, Math.min(10_000, Math.floor(lines)));
  if (n === 0) return [];
  const r = await runEngine(engine, ['logs', '--timestamps', '--tail', String(n), name], {
    maxBytes: 1024 * 1024,
    timeoutMs: 15_000,
  });
  if (r.code !== 0) throw new RuntimeError('runtime', `logs: ${r.stderr.trim()}`, { field: 'instanceId' });
  return mergeTimestampedLogs(r.stdout, r.stderr).slice(-n);
}
