import { rmSync } from 'node:fs';
import { basename, isAbsolute, join } from 'node:path';
import type { Capability } from '@heddle/placement';
import type {
  Admission,
  InstanceHandle,
  InstanceStatus,
  NetworkExposure,
  RunEvidence,
  RunHooks,
} from '../contract.js';
import { RuntimeError } from '../errors.js';
import {
  assertNotRunning,
  InstanceTable,
  instanceHandleFor,
  instanceIdFor,
} from '../local/instance-table.js';
import { checkConsoleCommand, checkDataDir, limitOption, validatedConfig } from '../local/load-checks.js';
import { LocalRuntime } from '../local/local-runtime.js';
import { terminateProcessGroup } from '../local/process-group.js';
import { consoleRunResult } from '../local/run-loop.js';
import { probeNative } from '../probe/native-probe.js';
import { checkRunMode, type RuntimeWorkload, type WorkloadConfig } from '../workload.js';
import { admitNative } from './native-admission.js';
import { adoptedRecord, reattachNativeProcess } from './native-adopt.js';
import { nativeConfigArgs, nativeEnvironment } from './native-argv.js';
import { installNativeExecutable, nativeInstanceDir } from './native-install.js';
import {
  type NativeInstance,
  nativeEmptyEvidence,
  nativeInstance,
  nativeLogs,
  nativeRunSpec,
} from './native-instance.js';
import {
  type NativeInstanceRecord,
  processStartTime,
  readInstanceRecord,
  readPidRecord,
  removePidRecord,
  writeInstanceRecord,
} from './native-instance-file.js';
import { NativeRun } from './native-process.js';

/** Options of {@link NativeRuntime}. */
export interface NativeRuntimeOptions {
  /** Directory holding one directory per instance (program copy, logs, pid file, record). */
  readonly stateDir: string;
  /**
   * The account workloads run as (name or uid from `/etc/passwd`). Required when the host runs as
   * root: without it (or with undefined) every workload is refused.
   */
  readonly runAsUser?: string | undefined;
  /**
   * Without `runAsUser` (and not root), run workloads as this host's own uid. Default false: refused,
   * because the workload could then read and write everything the host owns (its state dir, keys,
   * other instances' data). See docs/runtimes.md, "Native adapter".
   */
  readonly allowHostUser?: boolean;
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
  /**
   * CPU seconds of one `once` or `interval` run (soft RLIMIT_CPU; default 300; 0 leaves it): past it
   * the kernel sends SIGXCPU, which ends a program that does not handle it.
   */
  readonly cpuSeconds?: number;
  /** CPU seconds of a listener's run over its whole life (default 0: no limit). */
  readonly listenerCpuSeconds?: number;
  /** Longest console run before it is stopped (default 30 s). */
  readonly consoleTimeoutMs?: number;
  /**
   * Every instance's `host.dataDir` must resolve strictly under this directory (default
   * `<stateDir>/data`; see docs/runtimes.md, "Data directories").
   */
  readonly dataRoot?: string;
}

/**
 * The native adapter (id and route `native`): runs the verified executable of this host's arch as a
 * child process under the cog convention. See docs/runtimes.md ("Native adapter") for what it enforces.
 */
export class NativeRuntime extends LocalRuntime {
  readonly id: string = 'native';
  readonly route: string = 'native';
  readonly options: NativeRuntimeOptions;
  readonly #instances = new InstanceTable<NativeInstance>();

  /** An adapter keeping its instances under `options.stateDir`. */
  constructor(options: NativeRuntimeOptions) {
    super();
    if (!isAbsolute(options.stateDir)) {
      throw new RuntimeError('invalid_config', 'stateDir: expected an absolute path', { field: 'stateDir' });
    }
    limitOption('cpuSeconds', options.cpuSeconds, 0);
    limitOption('listenerCpuSeconds', options.listenerCpuSeconds, 0);
    this.options = options;
  }

  /**
   * `runtime.native` (attrs: `arch`, `os`, `run_as`) when a trivial program really runs: `/bin/sh -c
   * 'exit 0'` is spawned with an empty environment (as `runAsUser` when configured). Nothing when it
   * fails or when the host runs as root without `runAsUser`.
   */
  async provides(): Promise<readonly Capability[]> {
    return probeNative(this.options.runAsUser, this.options.allowHostUser === true);
  }

  /** See {@link admitNative}. */
  async admit(workload: RuntimeWorkload): Promise<Admission> {
    return admitNative(workload, this.options.runAsUser, process.platform, this.#hostUser()).admission;
  }

  /**
   * Admits, validates the run mode and config values (`invalid_config` naming the field), derives the
   * instance id, copies the verified executable into `<stateDir>/<instance id>/bin/` and checks that
   * the copy's BLAKE3 is the verified one, creates the data dir (owned by `runAsUser` when set), and
   * records the instance. Loading the same request again returns the same handle.
   */
  async load(workload: RuntimeWorkload, config: WorkloadConfig): Promise<InstanceHandle> {
    const admitted = admitNative(workload, this.options.runAsUser, process.platform, this.#hostUser());
    checkRunMode(config.runMode);
    const configArgs = nativeConfigArgs(validatedConfig(admitted.body.config, config.values));
    checkDataDir(config.host, this.#dataRoot());
    const instanceId = instanceIdFor(workload, config);
    nativeEnvironment(config.host, instanceId);
    const handle = instanceHandleFor(this.id, instanceId, workload);
    if (this.#instances.has(instanceId)) return handle;

    const dir = nativeInstanceDir(this.options.stateDir, instanceId);
    const executable = await installNativeExecutable(dir, admitted, config.host);
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
    this.#instances.set(
      instanceId,
      nativeInstance(record, dir, admitted.body, admitted.file.blake3, admitted.user, this.options),
    );
    return handle;
  }

  /**
   * Re-attaches an instance after a restart of the host process from its record. When its pid file
   * names a process that still runs with the same start time, the instance is `running` (its output
   * is no longer captured, and its exit status will not be known); otherwise it is `exited`.
   */
  async adopt(handle: InstanceHandle, workload: RuntimeWorkload): Promise<void> {
    if (this.#instances.has(handle.instanceId)) return;
    const admitted = admitNative(workload, this.options.runAsUser, process.platform, this.#hostUser());
    const dir = nativeInstanceDir(this.options.stateDir, handle.instanceId);
    const record = adoptedRecord(dir, handle, workload, admitted, this.#dataRoot());
    const inst = nativeInstance(
      record,
      dir,
      admitted.body,
      admitted.file.blake3,
      admitted.user,
      this.options,
    );
    this.#instances.set(handle.instanceId, inst);
    reattachNativeProcess(inst);
  }

  /**
   * Stops the process group an instance not adopted left running before a restart (its pid file
   * names a process that still runs with the recorded start time): SIGTERM, `graceMs`, SIGKILL; the
   * pid file is removed. An instance this adapter does hold is stopped as by {@link stop}. Resolves
   * false when nothing ran (or the id is not an instance's).
   */
  async abandon(handle: InstanceHandle, graceMs: number): Promise<boolean> {
    const id = handle.instanceId;
    const held = this.#instances.find(id);
    if (held !== undefined) {
      // Adopted here, but the host still gave up on it (its adoption could not be chained).
      if (!held.loop.busy && held.adopted === undefined) return false;
      await this.stop(handle, graceMs);
      return true;
    }
    if (id === '' || id === '.' || id === '..' || basename(id) !== id) return false;
    const dir = nativeInstanceDir(this.options.stateDir, id);
    if (readInstanceRecord(dir)?.instanceId !== id) return false;
    const pid = readPidRecord(dir);
    const runs = (): boolean =>
      pid !== undefined && pid.startTime !== null && processStartTime(pid.pid) === pid.startTime;
    if (pid === undefined || !runs()) {
      removePidRecord(dir);
      return false;
    }
    // Bounded: a process stuck in the kernel must not hold up the host's start for ever.
    const until = Date.now() + graceMs + 5_000;
    const gone = (async () => {
      while (runs() && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    })();
    await terminateProcessGroup(pid.pid, gone, graceMs);
    removePidRecord(dir);
    return true;
  }

  #hostUser(): { readonly allowHostUser: boolean } {
    return { allowHostUser: this.options.allowHostUser === true };
  }

  #dataRoot(): string {
    return this.options.dataRoot ?? join(this.options.stateDir, 'data');
  }

  /** Every later run of the instance goes through `hooks` (re-runs gated, exits reported). */
  watchRuns(handle: InstanceHandle, hooks: RunHooks): void {
    this.#instances.get(handle).loop.watch(hooks);
  }

  /** Starts a loaded (or ended) instance: `once` runs it once, `interval` runs it every `secs` after each run ends, `listener` runs it until stopped. */
  async start(handle: InstanceHandle): Promise<void> {
    const inst = this.#instances.get(handle);
    assertNotRunning(handle.instanceId, inst.loop.busy || inst.adopted !== undefined, 'start');
    inst.loop.start();
    if (inst.loop.current === undefined || inst.loop.state === 'failed') {
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
    const inst = this.#instances.get(handle);
    const loop = inst.loop;
    const run = loop.halt();
    let evidence: RunEvidence;
    if (run !== undefined) {
      evidence = await run.stop(graceMs);
    } else if (inst.adopted !== undefined) {
      const a = inst.adopted;
      const r = await terminateProcessGroup(a.pid, a.gone, graceMs);
      evidence = {
        ...nativeEmptyEvidence(inst, ['adopted after a restart: exit status and output are not known']),
        startedAtMs: a.startedAtMs,
        endedAtMs: Date.now(),
        killed: r.killed,
      };
    } else {
      evidence = loop.last ?? nativeEmptyEvidence(inst, ['was not running']);
    }
    loop.last = evidence;
    loop.state = 'stopped';
    loop.detail = undefined;
    return evidence;
  }

  /** Removes the instance directory (program copy, logs, record). The data dir is kept. Refuses a running instance. */
  async unload(handle: InstanceHandle): Promise<void> {
    const inst = this.#instances.get(handle);
    assertNotRunning(handle.instanceId, inst.loop.busy || inst.adopted !== undefined, 'unload');
    inst.stdoutLog.close();
    inst.stderrLog.close();
    rmSync(inst.dir, { recursive: true, force: true });
    this.#instances.delete(handle.instanceId);
  }

  /** The instance's status (`unknown` for an id this adapter does not hold). */
  async status(handle: InstanceHandle): Promise<InstanceStatus> {
    const inst = this.#instances.find(handle.instanceId);
    if (inst === undefined) return { instanceId: handle.instanceId, state: 'unknown' };
    const { current, last } = inst.loop;
    return inst.loop.status(handle.instanceId, {
      pid: current?.pid ?? inst.adopted?.pid,
      startedAtMs: current?.startedAtMs ?? inst.adopted?.startedAtMs ?? last?.startedAtMs,
    });
  }

  /**
   * The last `lines` lines of output, stdout and stderr interleaved as captured (stderr lines start
   * with `stderr: `). After a restart, when nothing was captured yet, the tails of the log files.
   */
  async logs(handle: InstanceHandle, lines: number): Promise<readonly string[]> {
    return nativeLogs(this.#instances.get(handle), lines);
  }

  /** `egress`: native processes are not network-isolated. */
  networkExposure(): NetworkExposure {
    return 'egress';
  }

  /**
   * Runs the program once as `<program> --console <command> <config args>` (same environment, user
   * and limits), stopped after `consoleTimeoutMs`. Only commands the package declares (`invalid_config`,
   * field `command`, otherwise).
   */
  async console(handle: InstanceHandle, command: string): Promise<RunEvidence> {
    const inst = this.#instances.get(handle);
    const declared = inst.body.console.map((c) => c.name);
    checkConsoleCommand(declared, command, inst.record.workloadId);
    // Not the instance's line tail and log files, and its own pipes: the instance's FIFOs are read by the
    // instance's run (one reader each).
    const {
      lines: _lines,
      stdoutLog: _stdoutLog,
      stderrLog: _stderrLog,
      fifos: _fifos,
      ...spec
    } = nativeRunSpec(inst, this.options);
    const run = new NativeRun({ ...spec, args: ['--console', command, ...inst.record.configArgs] });
    const timeoutMs = this.options.consoleTimeoutMs ?? 30_000;
    const { result, timedOut } = await consoleRunResult(run, timeoutMs);
    if (!timedOut) return result;
    return { ...result, notes: [...result.notes, `timeout: console run exceeded ${timeoutMs} ms`] };
  }
}
