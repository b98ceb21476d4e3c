import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { blake3Hex } from '@heddle/envelope';
import type { CogBody } from '@heddle/package';
import type { RunEvidence } from '../contract.js';
import { RuntimeError } from '../errors.js';
import { ensureDataDir } from '../local/data-dir.js';
import { emptyRunEvidence, RunLoop } from '../local/run-loop.js';
import { DEFAULT_OUTPUT_BUFFER_BYTES } from '../output/output-buffer.js';
import { LineTail } from '../output/output-buffer-lines.js';
import { DEFAULT_LOG_FILE_BYTES, DEFAULT_LOG_FILES, RotatingLog } from '../output/output-buffer-log.js';
import { nativeEnvironment, nativeModeArgs } from './native-argv.js';
import {
  type NativeInstanceRecord,
  processStartTime,
  removePidRecord,
  writePidRecord,
} from './native-instance-file.js';
import { ensureOutputFifos, type NativeFifos } from './native-output.js';
import { type NativeLimits, NativeRun, type NativeSpawnSpec } from './native-process.js';
import type { NativeRuntimeOptions } from './native-runtime.js';
import type { NativeRunUser } from './native-user.js';

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
  /** BLAKE3 of the verified executable: the installed copy is re-hashed against it before every run. */
  readonly blake3: string;
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
  blake3: string,
  user: NativeRunUser | undefined,
  options: NativeRuntimeOptions,
): NativeInstance {
  const asMb =
    options.addressSpaceMb ?? (process.platform === 'linux' ? Math.max(256, 4 * body.resources.ram_mb) : 0);
  const openFiles = options.openFiles ?? 1024;
  const cpuSeconds =
    record.runMode.type === 'listener' ? (options.listenerCpuSeconds ?? 0) : (options.cpuSeconds ?? 300);
  const limits =
    asMb === 0 && openFiles === 0 && cpuSeconds === 0
      ? undefined
      : { addressSpaceBytes: asMb * 1024 * 1024, openFiles, cpuSeconds };
  const logBytes = options.logFileBytes ?? DEFAULT_LOG_FILE_BYTES;
  const logFiles = options.logFiles ?? DEFAULT_LOG_FILES;
  const inst: NativeInstance = {
    record,
    dir,
    body,
    blake3,
    user,
    limits,
    lines: new LineTail(),
    stdoutLog: new RotatingLog(join(dir, 'logs', 'stdout.log'), logBytes, logFiles),
    stderrLog: new RotatingLog(join(dir, 'logs', 'stderr.log'), logBytes, logFiles),
    loop: new RunLoop(record.runMode, {
      launch: () => launchNative(inst, options),
      refused: (err) =>
        nativeEmptyEvidence(inst, [`run refused: ${err instanceof Error ? err.message : String(err)}`]),
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

/**
 * Refuses (`admission`, field `executable`) to run an installed copy whose BLAKE3 is no longer the
 * verified one (or that cannot be read). Checked before every spawn, interval re-runs included.
 */
export function checkInstalledCopy(executable: string, blake3: string): void {
  let digest: string;
  try {
    digest = blake3Hex(readFileSync(executable));
  } catch (cause) {
    throw new RuntimeError('admission', `executable: cannot read ${executable}`, {
      field: 'executable',
      cause,
    });
  }
  if (digest !== blake3) {
    throw new RuntimeError(
      'admission',
      `executable: ${executable} changed since it was verified (BLAKE3 ${digest}, expected ${blake3})`,
      { field: 'executable' },
    );
  }
}

/**
 * Spawns one run and writes its pid file: first re-hashes the installed copy (refused when it
 * changed) and re-creates the data dir as load does when it went missing.
 */
function launchNative(inst: NativeInstance, options: NativeRuntimeOptions): NativeRun {
  checkInstalledCopy(inst.record.executable, inst.blake3);
  const dataDir = inst.record.host.dataDir;
  if (!existsSync(dataDir)) ensureDataDir(dataDir, inst.user);
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
    ...fifosOf(inst),
  };
}

/** The instance's output FIFOs as a spec field (none when they cannot be made). */
function fifosOf(inst: NativeInstance): { fifos?: NativeFifos } {
  const fifos = ensureOutputFifos(inst.dir);
  return fifos === undefined ? {} : { fifos };
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
