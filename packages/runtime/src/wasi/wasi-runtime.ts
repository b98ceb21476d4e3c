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
import { assertReachableBy, checkDataDirUnder, ensureDataDir } from '../local/data-dir.js';
import {
  assertNotRunning,
  InstanceTable,
  instanceHandleFor,
  instanceIdFor,
} from '../local/instance-table.js';
import { checkConsoleCommand, limitOption, validatedConfig } from '../local/load-checks.js';
import { LocalRuntime } from '../local/local-runtime.js';
import { consoleRunResult, emptyRunEvidence } from '../local/run-loop.js';
import { type NativeRunUser, resolveRunUser, runningAsRoot } from '../native/native-user.js';
import { probeWasi } from '../probe/wasi-probe.js';
import { checkRunMode, type RuntimeWorkload, type WorkloadConfig } from '../workload.js';
import { admitWasi, wasiCapMb, wasiVerified } from './wasi-admission.js';
import { wasiArgv, wasiEnv } from './wasi-args.js';
import { loadCappedModule } from './wasi-compile.js';
import { wasiEvidence } from './wasi-evidence.js';
import { spawnWasi, type WasiInstance, wasiInstance } from './wasi-instance.js';
import { PROC_FD_DIR_USABLE } from './wasi-process.js';

export { WASI_VARIANT } from './wasi-admission.js';

/**
 * The account WASI runners run as: `runAsUser` (never root), or `nobody` on a root host; undefined on
 * a non-root host without `runAsUser` (runners run as this process's user). A non-root host cannot
 * switch to another user, so a `runAsUser` that is not itself is refused.
 */
function wasiRunUser(runAsUser: string | undefined): NativeRunUser | undefined {
  if (runningAsRoot()) return resolveRunUser(runAsUser ?? 'nobody');
  if (runAsUser === undefined) return undefined;
  const user = resolveRunUser(runAsUser);
  if (user.uid !== process.getuid?.()) {
    throw new RuntimeError(
      'admission',
      `runAsUser: only a root host can run WASI guests as another user (${runAsUser})`,
      { field: 'runAsUser' },
    );
  }
  return undefined;
}

/** Options of {@link WasiRuntime}. */
export interface WasiRuntimeOptions {
  /** Ceiling of any instance's linear memory in MiB (default 256); the cog's `ram_mb` applies below it. */
  readonly maxMemoryMb?: number;
  /** V8 heap limit of each runner process in MiB (default 64). */
  readonly runnerHeapMb?: number;
  /** Bytes of stdout and of stderr kept per run (default 64 KiB). */
  readonly outputBytes?: number;
  /** Lines kept for `logs` (default 1000). */
  readonly logLines?: number;
  /** A console run is killed after this long (default 30 s). */
  readonly consoleTimeoutMs?: number;
  /**
   * CPU seconds one `once` or `interval` run, or one console run, may use (default 300; 0: no limit):
   * `RLIMIT_CPU` of the runner, ended by SIGXCPU past it (note `cpu time limit exceeded`).
   */
  readonly cpuSeconds?: number;
  /**
   * CPU seconds a listener's run may use over its whole life (default 0: no limit, as a listener is
   * meant to run without end; set it to stop a listener that spins).
   */
  readonly listenerCpuSeconds?: number;
  /**
   * Wall-clock limit of one `once` or `interval` run in ms (default 600 000; 0: none); past it the run is
   * stopped (note `time limit exceeded`). Listeners have none; console runs have `consoleTimeoutMs`.
   */
  readonly maxRunMs?: number;
  /**
   * The account runners run as (a name or uid from `/etc/passwd`; never root). Default: `nobody` when
   * this process runs as root, else this process's own user. A non-root host cannot switch users, so
   * it refuses a `runAsUser` other than itself (`admission`, field `runAsUser`).
   */
  readonly runAsUser?: string;
  /**
   * Every instance's `host.dataDir` must resolve strictly under this directory (see
   * docs/runtimes.md, "Data directories"). Optional; without it the data dir is only checked for
   * being absolute, free of `:` and `,`, and not a symbolic link. Hosts should set it.
   */
  readonly dataRoot?: string;
}

/**
 * The WASI adapter (id and route `wasi`): runs a cog's `wasm32-wasi` variant under the runner's own
 * WASI preview1 (`wasi-preview1.mjs`, not `node:wasi`, whose stale memory view crashes Node 20 after
 * `memory.grow`) in a separate runner process per run, which stop can kill whatever the guest does,
 * as an unprivileged user on a root host, with CPU-time and wall-clock limits. The guest sees only
 * `/data` (the instance's data directory), argv and environment from the host contract, no sockets;
 * its linear memory is capped at `min(ram_mb, maxMemoryMb)` by rewriting the module's declared maximum
 * (see docs/runtimes.md, "WASI adapter").
 */
export class WasiRuntime extends LocalRuntime {
  readonly id: string = 'wasi';
  readonly route: string = 'wasi';
  readonly #options: Required<Omit<WasiRuntimeOptions, 'dataRoot' | 'runAsUser'>> & {
    readonly dataRoot?: string;
    readonly user?: NativeRunUser;
  };
  readonly #instances = new InstanceTable<WasiInstance>();
  #probe: Promise<readonly Capability[]> | undefined;

  /** An adapter with the given limits. */
  constructor(options: WasiRuntimeOptions = {}) {
    super();
    this.#options = {
      maxMemoryMb: options.maxMemoryMb ?? 256,
      runnerHeapMb: options.runnerHeapMb ?? 64,
      outputBytes: options.outputBytes ?? 64 * 1024,
      logLines: options.logLines ?? 1000,
      consoleTimeoutMs: options.consoleTimeoutMs ?? 30_000,
      cpuSeconds: limitOption('cpuSeconds', options.cpuSeconds, 300),
      listenerCpuSeconds: limitOption('listenerCpuSeconds', options.listenerCpuSeconds, 0),
      maxRunMs: limitOption('maxRunMs', options.maxRunMs, 600_000),
      ...(options.dataRoot === undefined ? {} : { dataRoot: options.dataRoot }),
    };
    const user = wasiRunUser(options.runAsUser);
    if (user !== undefined) this.#options = { ...this.#options, user };
  }

  /** `runtime.wasi`, probed once by running a tiny module in a runner process; none when that fails. */
  provides(): Promise<readonly Capability[]> {
    this.#probe ??= probeWasi(this.#options.maxMemoryMb, this.#options.user);
    return this.#probe;
  }

  /** Refuses store pins, a package without a `wasm32-wasi` variant, and a file that is not wasm. */
  async admit(workload: RuntimeWorkload): Promise<Admission> {
    return admitWasi(workload, this.id, this.#options.maxMemoryMb);
  }

  /** Validates config, reads and re-hashes the module, caps its memory, compiles it, makes the data dir. */
  async load(workload: RuntimeWorkload, config: WorkloadConfig): Promise<InstanceHandle> {
    await this.admit(workload);
    const verified = wasiVerified(workload);
    const values = validatedConfig(verified.body.config, config.values);
    const mode = config.runMode;
    checkRunMode(mode);
    checkDataDirUnder(config.host.dataDir, this.#options.dataRoot);
    const instanceId = instanceIdFor(workload, config);
    const existing = this.#instances.find(instanceId);
    if (existing !== undefined) return existing.handle;

    const module = await loadCappedModule(verified, wasiCapMb(verified.body, this.#options.maxMemoryMb));
    const argv = wasiArgv(`${workload.id}.wasm`, mode, values);
    const env = wasiEnv(config.host, instanceId);
    ensureDataDir(config.host.dataDir, this.#options.user);
    // Where the directory cannot be passed as a descriptor, the run user must reach it by its path.
    if (this.#options.user !== undefined && !PROC_FD_DIR_USABLE) {
      assertReachableBy(config.host.dataDir, this.#options.user);
    }
    const handle = instanceHandleFor(this.id, instanceId, workload);
    const parts = { handle, workload, config: { ...config, values }, module, argv, env };
    this.#instances.set(instanceId, wasiInstance(parts, this.#options));
    return handle;
  }

  /**
   * Runner processes do not survive the host that spawned them being replaced, and the adapter keeps
   * no state on disk: adopt accepts only an instance this adapter object still knows (a no-op) and
   * refuses others with `unknown_instance`, so the host loads them again.
   */
  async adopt(handle: InstanceHandle, _workload: RuntimeWorkload): Promise<void> {
    this.#instances.get(handle);
  }

  /** Every later run of the instance goes through `hooks` (re-runs gated, exits reported). */
  watchRuns(handle: InstanceHandle, hooks: RunHooks): void {
    this.#instances.get(handle).loop.watch(hooks);
  }

  /** Starts the run loop: one run (`once`, `listener`) or a run every `secs` after the last ended. */
  async start(handle: InstanceHandle): Promise<void> {
    const inst = this.#instances.get(handle);
    assertNotRunning(handle.instanceId, inst.loop.busy, 'start');
    inst.loop.start();
  }

  /** SIGTERM to the runner, SIGKILL after `graceMs`; the evidence of the run it ended (or the last). */
  async stop(handle: InstanceHandle, graceMs: number): Promise<RunEvidence> {
    const inst = this.#instances.get(handle);
    const loop = inst.loop;
    const run = loop.halt();
    if (run !== undefined) {
      const result = await run.stop(graceMs);
      const evidence = wasiEvidence(inst.handle.instanceId, inst.argv, result, inst.module, {
        stopped: true,
      });
      loop.last = evidence;
      loop.state = 'stopped';
      return evidence;
    }
    if (loop.state === 'running' || loop.state === 'loaded') loop.state = 'stopped';
    return loop.last ?? emptyRunEvidence(inst.handle.instanceId, inst.argv, ['not running']);
  }

  /** Forgets the instance (its data directory is kept: it is the instance's data). */
  async unload(handle: InstanceHandle): Promise<void> {
    const inst = this.#instances.get(handle);
    assertNotRunning(handle.instanceId, inst.loop.busy, 'unload');
    this.#instances.delete(handle.instanceId);
  }

  /** The instance's state; `unknown` for an id this adapter does not know. */
  async status(handle: InstanceHandle): Promise<InstanceStatus> {
    const inst = this.#instances.find(handle.instanceId);
    if (inst === undefined) return { instanceId: handle.instanceId, state: 'unknown' };
    return inst.loop.status(handle.instanceId);
  }

  /** The last `lines` lines of guest output (stderr lines prefixed `stderr: `). */
  async logs(handle: InstanceHandle, lines: number): Promise<readonly string[]> {
    return this.#instances.get(handle).log.last(lines);
  }

  /** `none`: a WASI guest gets no sockets. */
  networkExposure(): NetworkExposure {
    return 'none';
  }

  /**
   * Runs the module once with `--console <command>` and the config values; only commands the package
   * declares (`invalid_config` otherwise). Killed after `consoleTimeoutMs` (noted as `timeout`).
   */
  async console(handle: InstanceHandle, command: string): Promise<RunEvidence> {
    const inst = this.#instances.get(handle);
    const declared = wasiVerified(inst.workload).body.console.map((c) => c.name);
    checkConsoleCommand(declared, command, inst.workload.id);
    const argv = wasiArgv(`${inst.workload.id}.wasm`, { type: 'console', command }, inst.config.values);
    const run = spawnWasi(inst, argv, this.#options, 'console');
    const { result, timedOut } = await consoleRunResult(run, this.#options.consoleTimeoutMs);
    return wasiEvidence(inst.handle.instanceId, argv, result, inst.module, { timedOut });
  }
}
