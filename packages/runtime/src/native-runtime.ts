import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { basename, isAbsolute, join, resolve } from 'node:path';
import type { JsonValue } from '@heddle/envelope';
import { type CogBody, hashFile, PackageError, validateCogConfig } from '@heddle/package';
import type { Capability } from '@heddle/placement';
import type {
  Admission,
  ControlMode,
  InstanceHandle,
  InstanceState,
  InstanceStatus,
  LinkSecurity,
  NetworkExposure,
  Preemption,
  RunEvidence,
  WorkloadRuntime,
} from './contract.js';
import { hostCogArch } from './elf.js';
import { RuntimeError } from './errors.js';
import { deriveInstanceId } from './instance-id.js';
import { admitNative } from './native-admission.js';
import { checkRunMode, nativeConfigArgs, nativeEnvironment, nativeModeArgs } from './native-argv.js';
import {
  type NativeInstanceRecord,
  processStartTime,
  readInstanceRecord,
  readPidRecord,
  removePidRecord,
  writeInstanceRecord,
  writePidRecord,
} from './native-instance-file.js';
import { type NativeLimits, NativeRun } from './native-process.js';
import { type NativeRunUser, resolveRunUser, runningAsRoot } from './native-user.js';
import { DEFAULT_OUTPUT_BUFFER_BYTES } from './output-buffer.js';
import { LineTail } from './output-buffer-lines.js';
import { DEFAULT_LOG_FILE_BYTES, DEFAULT_LOG_FILES, RotatingLog } from './output-buffer-log.js';
import { terminateProcessGroup } from './process-group.js';
import type { RuntimeWorkload, WorkloadConfig } from './workload.js';

/** Options of {@link NativeRuntime}. */
export interface NativeRuntimeOptions {
  /** Directory holding one directory per instance (program copy, logs, pid file, record). */
  readonly stateDir: string;
  /**
   * The account workloads run as (name or uid from `/etc/passwd`). Required when the host runs as
   * root: without it every workload is refused.
   */
  readonly runAsUser?: string;
  /** Bytes kept of each of stdout and stderr per run (default 64 KiB). */
  readonly bufferBytes?: number;
  /** Size of one log file before rotation (default 1 MiB) and files kept per stream (default 3). */
  readonly logFileBytes?: number;
  readonly logFiles?: number;
  /**
   * RLIMIT_AS in MiB for every process. Default: on Linux `max(256, 4 x resources.ram_mb)` of the cog
   * (address space is larger than resident memory, hence the factor); elsewhere not set. 0 disables.
   */
  readonly addressSpaceMb?: number;
  /** RLIMIT_NOFILE (default 1024; 0 leaves it). */
  readonly openFiles?: number;
  /** Longest console run before it is stopped (default 30 s). */
  readonly consoleTimeoutMs?: number;
}

interface Instance {
  readonly record: NativeInstanceRecord;
  readonly dir: string;
  readonly body: CogBody;
  readonly user: NativeRunUser | undefined;
  readonly limits: NativeLimits | undefined;
  readonly lines: LineTail;
  readonly stdoutLog: RotatingLog;
  readonly stderrLog: RotatingLog;
  state: InstanceState;
  runs: number;
  current: NativeRun | undefined;
  /** A process found running by adopt (not our child). */
  adopted: { pid: number; startTime: string | null; startedAtMs: number; gone: Promise<void> } | undefined;
  last: RunEvidence | undefined;
  timer: NodeJS.Timeout | undefined;
  stopRequested: boolean;
  detail: string | undefined;
}

const delay = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * The native adapter (id and route `native`): runs the verified executable of this host's arch as a
 * child process under the cog convention. See docs/runtimes.md ("Native adapter") for what it enforces.
 */
export class NativeRuntime implements WorkloadRuntime {
  readonly id: string = 'native';
  readonly route: string = 'native';
  readonly options: NativeRuntimeOptions;
  readonly #instances = new Map<string, Instance>();

  /** An adapter keeping its instances under `options.stateDir`. */
  constructor(options: NativeRuntimeOptions) {
    if (!isAbsolute(options.stateDir)) {
      throw new RuntimeError('invalid_config', 'stateDir: expected an absolute path', { field: 'stateDir' });
    }
    this.options = options;
  }

  /**
   * `runtime.native` (attrs: `arch`, `os`, `run_as`) when a trivial program really runs: `/bin/sh -c
   * 'exit 0'` is spawned with an empty environment (as `runAsUser` when configured). Nothing when it
   * fails or when the host runs as root without `runAsUser`.
   */
  async provides(): Promise<readonly Capability[]> {
    const arch = hostCogArch();
    if (arch === undefined) return [];
    let user: NativeRunUser | undefined;
    try {
      user = admitUser(this.options.runAsUser);
    } catch {
      return [];
    }
    const r = spawnSync('/bin/sh', ['-c', 'exit 0'], {
      env: {},
      timeout: 5000,
      stdio: 'ignore',
      ...(user === undefined ? {} : { uid: user.uid, gid: user.gid }),
    });
    if (r.status !== 0) return [];
    return [
      {
        id: 'runtime.native',
        attrs: { arch, os: process.platform, run_as: user === undefined ? 'self' : user.name },
        provenance: 'probed',
        state: 'available',
        exclusive: false,
      },
    ];
  }

  /** See {@link admitNative}. */
  async admit(workload: RuntimeWorkload): Promise<Admission> {
    return admitNative(workload, this.options.runAsUser).admission;
  }

  /**
   * Admits, validates the run mode and config values (`invalid_config` naming the field), derives the
   * instance id, copies the verified executable into `<stateDir>/<instance id>/bin/` and checks that
   * the copy's BLAKE3 is the verified one, creates the data dir (owned by `runAsUser` when set), and
   * records the instance. Loading the same request again returns the same handle.
   */
  async load(workload: RuntimeWorkload, config: WorkloadConfig): Promise<InstanceHandle> {
    const admitted = admitNative(workload, this.options.runAsUser);
    checkRunMode(config.runMode);
    let values: Record<string, JsonValue>;
    try {
      values = validateCogConfig(admitted.body.config, config.values);
    } catch (err) {
      if (err instanceof PackageError) {
        throw new RuntimeError('invalid_config', err.message, { field: err.field ?? 'config', cause: err });
      }
      throw err;
    }
    const configArgs = nativeConfigArgs(values);
    if (!isAbsolute(config.host.dataDir)) {
      throw new RuntimeError('invalid_config', 'host.dataDir: expected an absolute path', {
        field: 'host.dataDir',
      });
    }
    const instanceId = deriveInstanceId(
      workload.id,
      workload.ref,
      config.values,
      config.runMode,
      config.host.nodeId,
    );
    nativeEnvironment(config.host, instanceId);
    const handle = this.#handle(instanceId, workload);
    if (this.#instances.has(instanceId)) return handle;

    const dir = join(resolve(this.options.stateDir), instanceId);
    mkdirSync(join(dir, 'bin'), { recursive: true, mode: 0o711 });
    mkdirSync(join(dir, 'logs'), { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o711);
    chmodSync(join(dir, 'bin'), 0o711);
    const executable = join(dir, 'bin', basename(admitted.file.path));
    rmSync(executable, { force: true });
    copyFileSync(admitted.file.absolutePath, executable);
    chmodSync(executable, 0o555);
    const digest = await hashFile(executable);
    if (digest.blake3 !== admitted.file.blake3) {
      rmSync(dir, { recursive: true, force: true });
      throw new RuntimeError('admission', `${admitted.file.path}: changed since it was verified`, {
        field: `files.${admitted.file.path}`,
      });
    }
    mkdirSync(config.host.dataDir, { recursive: true, mode: 0o700 });
    if (admitted.user !== undefined) chownSync(config.host.dataDir, admitted.user.uid, admitted.user.gid);
    const record: NativeInstanceRecord = {
      instanceId,
      workloadRef: workload.ref,
      workloadId: workload.id,
      version: workload.version,
      executable,
      configArgs,
      runMode: config.runMode,
      host: config.host,
      values: config.values,
    };
    writeInstanceRecord(dir, record);
    this.#instances.set(instanceId, this.#instance(record, dir, admitted.body, admitted.user));
    return handle;
  }

  /**
   * Re-attaches an instance after a restart of the host process from its record. When its pid file
   * names a process that still runs with the same start time, the instance is `running` (its output
   * is no longer captured, and its exit status will not be known); otherwise it is `exited`.
   */
  async adopt(handle: InstanceHandle, workload: RuntimeWorkload): Promise<void> {
    if (this.#instances.has(handle.instanceId)) return;
    const admitted = admitNative(workload, this.options.runAsUser);
    const dir = join(resolve(this.options.stateDir), handle.instanceId);
    const record = readInstanceRecord(dir);
    if (record === undefined || record.instanceId !== handle.instanceId) {
      throw new RuntimeError('unknown_instance', `instanceId: no record of ${handle.instanceId}`, {
        field: 'instanceId',
      });
    }
    if (record.workloadRef !== workload.ref) {
      throw new RuntimeError(
        'admission',
        `workload: ${handle.instanceId} was loaded from ${record.workloadRef}`,
        {
          field: 'workload',
        },
      );
    }
    const inst = this.#instance(record, dir, admitted.body, admitted.user);
    this.#instances.set(handle.instanceId, inst);
    const pid = readPidRecord(dir);
    if (pid !== undefined && pid.startTime !== null && processStartTime(pid.pid) === pid.startTime) {
      const gone = (async () => {
        while (processStartTime(pid.pid) === pid.startTime) await delay(250);
      })();
      inst.adopted = { ...pid, gone };
      inst.state = 'running';
      inst.detail = 'adopted after a restart: output is not captured, exit status will not be known';
      void gone.then(() => {
        if (inst.adopted?.pid !== pid.pid) return;
        inst.adopted = undefined;
        removePidRecord(dir);
        if (!inst.stopRequested) {
          inst.state = 'exited';
          inst.detail = 'adopted process ended; exit status unknown';
        }
      });
    } else {
      removePidRecord(dir);
      inst.state = 'exited';
      inst.detail = 'not running after a restart of the host';
    }
  }

  /** Starts a loaded (or ended) instance: `once` runs it once, `interval` runs it every `secs` after each run ends, `listener` runs it until stopped. */
  async start(handle: InstanceHandle): Promise<void> {
    const inst = this.#get(handle);
    if (inst.current !== undefined || inst.adopted !== undefined || inst.timer !== undefined) {
      throw new RuntimeError('runtime', `instanceId: ${handle.instanceId} is already running`, {
        field: 'instanceId',
      });
    }
    inst.stopRequested = false;
    this.#runNow(inst);
    if (inst.current === undefined || inst.state === 'failed') {
      throw new RuntimeError('runtime', `start: ${handle.instanceId} could not be started`, {
        field: 'start',
      });
    }
  }

  /**
   * SIGTERM to the instance's process group, `graceMs`, SIGKILL to the group; cancels the next
   * interval run. Returns the evidence of the run it stopped, or of the last run when none was running.
   */
  async stop(handle: InstanceHandle, graceMs: number): Promise<RunEvidence> {
    const inst = this.#get(handle);
    inst.stopRequested = true;
    if (inst.timer !== undefined) clearTimeout(inst.timer);
    inst.timer = undefined;
    let evidence: RunEvidence;
    if (inst.current !== undefined) {
      evidence = await inst.current.stop(graceMs);
    } else if (inst.adopted !== undefined) {
      const a = inst.adopted;
      const r = await terminateProcessGroup(a.pid, a.gone, graceMs);
      evidence = {
        ...emptyEvidence(inst),
        startedAtMs: a.startedAtMs,
        endedAtMs: Date.now(),
        killed: r.killed,
        notes: ['adopted after a restart: exit status and output are not known'],
      };
    } else {
      evidence = inst.last ?? { ...emptyEvidence(inst), notes: ['was not running'] };
    }
    inst.last = evidence;
    inst.state = 'stopped';
    inst.detail = undefined;
    return evidence;
  }

  /** Removes the instance directory (program copy, logs, record). The data dir is kept. Refuses a running instance. */
  async unload(handle: InstanceHandle): Promise<void> {
    const inst = this.#get(handle);
    if (inst.current !== undefined || inst.adopted !== undefined || inst.timer !== undefined) {
      throw new RuntimeError('runtime', `instanceId: ${handle.instanceId} is running; stop it first`, {
        field: 'instanceId',
      });
    }
    inst.stdoutLog.close();
    inst.stderrLog.close();
    rmSync(inst.dir, { recursive: true, force: true });
    this.#instances.delete(handle.instanceId);
  }

  /** The instance's status (`unknown` for an id this adapter does not hold). */
  async status(handle: InstanceHandle): Promise<InstanceStatus> {
    const inst = this.#instances.get(handle.instanceId);
    if (inst === undefined) return { instanceId: handle.instanceId, state: 'unknown' };
    const pid = inst.current?.pid ?? inst.adopted?.pid;
    const startedAtMs = inst.current?.startedAtMs ?? inst.adopted?.startedAtMs ?? inst.last?.startedAtMs;
    return {
      instanceId: handle.instanceId,
      state: inst.state,
      ...(pid === undefined ? {} : { pid }),
      ...(startedAtMs === undefined || startedAtMs === null ? {} : { startedAtMs }),
      ...(inst.last === undefined ? {} : { lastExitCode: inst.last.exitCode, lastSignal: inst.last.signal }),
      runs: inst.runs,
      ...(inst.detail === undefined ? {} : { detail: inst.detail }),
    };
  }

  /**
   * The last `lines` lines of output, stdout and stderr interleaved as captured (stderr lines start
   * with `stderr: `). After a restart, when nothing was captured yet, the tails of the log files.
   */
  async logs(handle: InstanceHandle, lines: number): Promise<readonly string[]> {
    const inst = this.#get(handle);
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

  /** `managed`: this adapter starts and stops the processes. */
  controlMode(): ControlMode {
    return 'managed';
  }

  /** `local`: processes on this machine. */
  linkSecurity(): LinkSecurity {
    return 'local';
  }

  /** `egress`: native processes are not network-isolated. */
  networkExposure(): NetworkExposure {
    return 'egress';
  }

  /** None: a native console run does not need another workload stopped. */
  async consolePreemptions(_handle: InstanceHandle): Promise<readonly Preemption[]> {
    return [];
  }

  /** Nothing to preempt (see {@link consolePreemptions}). */
  async preempt(_preemption: Preemption): Promise<void> {}

  /** Nothing to resume. */
  async resume(_preemption: Preemption): Promise<void> {}

  /**
   * Runs the program once as `<program> --console <command> <config args>` (same environment, user
   * and limits), stopped after `consoleTimeoutMs`. Only commands the package declares (`invalid_config`,
   * field `command`, otherwise).
   */
  async console(handle: InstanceHandle, command: string): Promise<RunEvidence> {
    const inst = this.#get(handle);
    if (!inst.body.console.some((c) => c.name === command)) {
      const known = inst.body.console.map((c) => c.name).join(', ') || 'none';
      throw new RuntimeError(
        'invalid_config',
        `command: ${JSON.stringify(command)} is not a console command of ${inst.record.workloadId} (declared: ${known})`,
        { field: 'command' },
      );
    }
    const run = new NativeRun({
      ...this.#spec(inst),
      args: ['--console', command, ...inst.record.configArgs],
      lines: undefined,
      stdoutLog: undefined,
      stderrLog: undefined,
    });
    const timeoutMs = this.options.consoleTimeoutMs ?? 30_000;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((r) => {
      timer = setTimeout(() => r('timeout'), timeoutMs);
    });
    const first = await Promise.race([run.done, timedOut]);
    clearTimeout(timer);
    if (first !== 'timeout') return first;
    const ev = await run.stop(1000);
    return { ...ev, notes: [...ev.notes, `timeout: console run exceeded ${timeoutMs} ms`] };
  }

  #handle(instanceId: string, workload: RuntimeWorkload): InstanceHandle {
    return { instanceId, runtime: 'native', workloadId: workload.id, version: workload.version };
  }

  #get(handle: InstanceHandle): Instance {
    const inst = this.#instances.get(handle.instanceId);
    if (inst === undefined) {
      throw new RuntimeError('unknown_instance', `instanceId: ${handle.instanceId} is not loaded here`, {
        field: 'instanceId',
      });
    }
    return inst;
  }

  #instance(
    record: NativeInstanceRecord,
    dir: string,
    body: CogBody,
    user: NativeRunUser | undefined,
  ): Instance {
    const asMb =
      this.options.addressSpaceMb ??
      (process.platform === 'linux' ? Math.max(256, 4 * body.resources.ram_mb) : 0);
    const openFiles = this.options.openFiles ?? 1024;
    const limits =
      asMb === 0 && openFiles === 0 ? undefined : { addressSpaceBytes: asMb * 1024 * 1024, openFiles };
    const logBytes = this.options.logFileBytes ?? DEFAULT_LOG_FILE_BYTES;
    const logFiles = this.options.logFiles ?? DEFAULT_LOG_FILES;
    return {
      record,
      dir,
      body,
      user,
      limits,
      lines: new LineTail(),
      stdoutLog: new RotatingLog(join(dir, 'logs', 'stdout.log'), logBytes, logFiles),
      stderrLog: new RotatingLog(join(dir, 'logs', 'stderr.log'), logBytes, logFiles),
      state: 'loaded',
      runs: 0,
      current: undefined,
      adopted: undefined,
      last: undefined,
      timer: undefined,
      stopRequested: false,
      detail: undefined,
    };
  }

  #spec(inst: Instance): ConstructorParameters<typeof NativeRun>[0] {
    const r = inst.record;
    return {
      instanceId: r.instanceId,
      executable: r.executable,
      args: [...nativeModeArgs(r.runMode), ...r.configArgs],
      env: nativeEnvironment(r.host, r.instanceId),
      cwd: r.host.dataDir,
      ...(inst.user === undefined ? {} : { user: inst.user }),
      ...(inst.limits === undefined ? {} : { limits: inst.limits }),
      bufferBytes: this.options.bufferBytes ?? DEFAULT_OUTPUT_BUFFER_BYTES,
      stdoutLog: inst.stdoutLog,
      stderrLog: inst.stderrLog,
      lines: inst.lines,
    };
  }

  #runNow(inst: Instance): void {
    inst.timer = undefined;
    if (!existsSync(inst.record.host.dataDir))
      mkdirSync(inst.record.host.dataDir, { recursive: true, mode: 0o700 });
    const run = new NativeRun(this.#spec(inst));
    inst.current = run;
    inst.runs++;
    inst.state = 'running';
    inst.detail = undefined;
    const pid = run.pid;
    if (pid !== undefined) {
      writePidRecord(inst.dir, {
        pid,
        startTime: processStartTime(pid) ?? null,
        startedAtMs: run.startedAtMs,
      });
    }
    void run.done.then((ev) => {
      if (inst.current !== run) return;
      inst.current = undefined;
      inst.last = ev;
      removePidRecord(inst.dir);
      if (inst.stopRequested) return;
      if (ev.startedAtMs === null) {
        inst.state = 'failed';
        inst.detail = ev.notes.join('; ');
        return;
      }
      if (inst.record.runMode.type === 'interval') {
        const secs = inst.record.runMode.secs;
        inst.detail = `waiting ${secs} s for the next interval`;
        inst.timer = setTimeout(() => this.#runNow(inst), secs * 1000);
        return;
      }
      inst.state = 'exited';
    });
  }
}

function admitUser(runAsUser: string | undefined): NativeRunUser | undefined {
  if (runAsUser !== undefined) return resolveRunUser(runAsUser);
  if (runningAsRoot()) throw new Error('refusing to run as root');
  return undefined;
}

function emptyEvidence(inst: Instance): RunEvidence {
  return {
    instanceId: inst.record.instanceId,
    args: [inst.record.executable, ...nativeModeArgs(inst.record.runMode), ...inst.record.configArgs],
    exitCode: null,
    signal: null,
    startedAtMs: null,
    endedAtMs: null,
    killed: false,
    stdout: '',
    stdoutTruncatedBytes: 0,
    stderr: '',
    stderrTruncatedBytes: 0,
    notes: [],
  };
}
