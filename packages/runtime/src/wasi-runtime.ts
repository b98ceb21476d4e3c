import type { Capability } from '@heddle/placement';
import type { Admission, InstanceHandle, InstanceStatus, NetworkExposure, RunEvidence } from './contract.js';
import { checkDataDirUnder, ensureDataDir } from './data-dir.js';
import { assertNotRunning, InstanceTable, instanceHandleFor, instanceIdFor } from './instance-table.js';
import { checkConsoleCommand, validatedConfig } from './load-checks.js';
import { LocalRuntime } from './local-runtime.js';
import { consoleRunResult, emptyRunEvidence } from './run-loop.js';
import { admitWasi, wasiCapMb, wasiVerified } from './wasi-admission.js';
import { wasiArgv, wasiEnv } from './wasi-args.js';
import { loadCappedModule } from './wasi-compile.js';
import { wasiEvidence } from './wasi-evidence.js';
import { spawnWasi, type WasiInstance, wasiInstance } from './wasi-instance.js';
import { probeWasi } from './wasi-probe.js';
import { checkRunMode, type RuntimeWorkload, type WorkloadConfig } from './workload.js';

export { WASI_VARIANT } from './wasi-admission.js';

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
   * Every instance's `host.dataDir` must resolve strictly under this directory (see
   * docs/runtimes.md, "Data directories"). Optional; without it the data dir is only checked for
   * being absolute, free of `:` and `,`, and not a symbolic link. Hosts should set it.
   */
  readonly dataRoot?: string;
}

/**
 * The WASI adapter (id and route `wasi`): runs a cog's `wasm32-wasi` variant under Node's `node:wasi`
 * (preview1) in a separate runner process per run, which stop can kill whatever the guest does. The
 * guest sees only `/data` (the instance's data directory), argv and environment from the host
 * contract, no sockets; its linear memory is capped at `min(ram_mb, maxMemoryMb)` by rewriting the
 * module's declared maximum (see docs/runtimes.md, "WASI adapter").
 */
export class WasiRuntime extends LocalRuntime {
  readonly id: string = 'wasi';
  readonly route: string = 'wasi';
  readonly #options: Required<Omit<WasiRuntimeOptions, 'dataRoot'>> & { readonly dataRoot?: string };
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
      ...(options.dataRoot === undefined ? {} : { dataRoot: options.dataRoot }),
    };
  }

  /** `runtime.wasi`, probed once by running a tiny module in a runner process; none when that fails. */
  provides(): Promise<readonly Capability[]> {
    this.#probe ??= probeWasi(this.#options.maxMemoryMb);
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
    ensureDataDir(config.host.dataDir);
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
    const run = spawnWasi(inst, argv, this.#options, false);
    const { result, timedOut } = await consoleRunResult(run, this.#options.consoleTimeoutMs);
    return wasiEvidence(inst.handle.instanceId, argv, result, inst.module, { timedOut });
  }
}
