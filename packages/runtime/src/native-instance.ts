import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CogBody } from '@heddle/package';
import type { RunEvidence } from './contract.js';
import { nativeEnvironment, nativeModeArgs } from './native-argv.js';
import {
  type NativeInstanceRecord,
  processStartTime,
  removePidRecord,
  writePidRecord,
} from './native-instance-file.js';
import { type NativeLimits, NativeRun, type NativeSpawnSpec } from './native-process.js';
import type { NativeRuntimeOptions } from './native-runtime.js';
import type { NativeRunUser } from './native-user.js';
import { DEFAULT_OUTPUT_BUFFER_BYTES } from './output-buffer.js';
import { LineTail } from './output-buffer-lines.js';
import { DEFAULT_LOG_FILE_BYTES, DEFAULT_LOG_FILES, RotatingLog } from './output-buffer-log.js';
import { emptyRunEvidence, RunLoop } from './run-loop.js';

/** A process found running by adopt after a restart (not a child of this process). */
export interface AdoptedProcess {
  readonly pid: number;
  readonly startTime: string | null;
  readonly startedAtMs: number;
  /** Resolves when the process is gone. */
  readonly gone: Promise<void>;
}

/** An instance the native adapter holds: its record, directory, output and run loop. */
export interface NativeInstance {
  readonly record: NativeInstanceRecord;
  readonly dir: string;
  readonly body: CogBody;
  readonly user: NativeRunUser | undefined;
  readonly limits: NativeLimits | undefined;
  readonly lines: LineTail;
  readonly stdoutLog: RotatingLog;
  readonly stderrLog: RotatingLog;
  readonly loop: RunLoop<NativeRun, RunEvidence>;
  /** The process adopt found running, until it is gone or stopped. */
  adopted: AdoptedProcess | undefined;
}

/**
 * A native instance of `record` in `dir`: its limits (RLIMIT_AS `max(256, 4 x ram_mb)` MiB on Linux
 * unless configured, RLIMIT_NOFILE 1024), rotating logs under `dir/logs`, and a run loop whose runs
 * write the pid file while they last.
 */
export function nativeInstance(
  record: NativeInstanceRecord,
  dir: string,
  body: CogBody,
  user: NativeRunUser | undefined,
  options: NativeRuntimeOptions,
): NativeInstance {
  const asMb =
    options.addressSpaceMb ?? (process.platform === 'linux' ? Math.max(256, 4 * body.resources.ram_mb) : 0);
  const openFiles = options.openFiles ?? 1024;
  const limits =
    asMb === 0 && openFiles === 0 ? undefined : { addressSpaceBytes: asMb * 1024 * 1024, openFiles };
  const logBytes = options.logFileBytes ?? DEFAULT_LOG_FILE_BYTES;
  const logFiles = options.logFiles ?? DEFAULT_LOG_FILES;
  const inst: NativeInstance = {
    record,
    dir,
    body,
    user,
    limits,
    lines: new LineTail(),
    stdoutLog: new RotatingLog(join(dir, 'logs', 'stdout.log'), logBytes, logFiles),
    stderrLog: new RotatingLog(join(dir, 'logs', 'stderr.log'), logBytes, logFiles),
    loop: new RunLoop(record.runMode, {
      launch: () => launchNative(inst, options),
      ended: (ev) => {
        removePidRecord(dir);
        return {
          evidence: ev,
          state: 'exited',
          ...(ev.startedAtMs === null ? { failedToStart: ev.notes.join('; ') } : {}),
        };
      },
    }),
    adopted: undefined,
  };
  return inst;
}

/** Spawns one run (re-creating the data dir if it went missing) and writes its pid file. */
function launchNative(inst: NativeInstance, options: NativeRuntimeOptions): NativeRun {
  const dataDir = inst.record.host.dataDir;
  if (!existsSync(dataDir)) mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const run = new NativeRun(nativeRunSpec(inst, options));
  const pid = run.pid;
  if (pid !== undefined) {
    writePidRecord(inst.dir, { pid, startTime: processStartTime(pid) ?? null, startedAtMs: run.startedAtMs });
  }
  return run;
}

/** The spawn spec of a run of the instance: the run-mode and config arguments, environment, user and limits. */
export function nativeRunSpec(inst: NativeInstance, options: NativeRuntimeOptions): NativeSpawnSpec {
  const r = inst.record;
  return {
    instanceId: r.instanceId,
    executable: r.executable,
    args: [...nativeModeArgs(r.runMode), ...r.configArgs],
    env: nativeEnvironment(r.host, r.instanceId),
    cwd: r.host.dataDir,
    ...(inst.user === undefined ? {} : { user: inst.user }),
    ...(inst.limits === undefined ? {} : { limits: inst.limits }),
    bufferBytes: options.bufferBytes ?? DEFAULT_OUTPUT_BUFFER_BYTES,
    stdoutLog: inst.stdoutLog,
    stderrLog: inst.stderrLog,
    lines: inst.lines,
  };
}

/** Evidence of the instance without a run (its full argv, nothing else known). */
export function nativeEmptyEvidence(inst: NativeInstance, notes: readonly string[]): RunEvidence {
  const r = inst.record;
  return emptyRunEvidence(r.instanceId, [r.executable, ...nativeModeArgs(r.runMode), ...r.configArgs], notes);
}

/**
 * The last `lines` lines of output as captured; after a restart, when nothing was captured yet, the
 * tails of the log files (stdout's, then stderr's prefixed `stderr: `).
 */
export function nativeLogs(inst: NativeInstance, lines: number): readonly string[] {
  const captured = inst.lines.last(lines);
  if (captured.length > 0 || lines <= 0) return captured;
  const fromFile = (log: RotatingLog, prefix: string): string[] => {
    const out: string[] = [];
    for (const p of log.paths()) {
      for (const l of readFileSync(p, 'utf8').split('\n')) if (l !== '') out.push(prefix + l);
    }
    return out.slice(-lines);
  };
  return [...fromFile(inst.stdoutLog, ''), ...fromFile(inst.stderrLog, 'stderr: ')].slice(-lines);
}
