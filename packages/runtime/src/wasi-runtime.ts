import { mkdirSync } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { blake3Hex, type JsonValue } from '@heddle/envelope';
import { type CogBody, PackageError, type VerifiedWorkload, validateCogConfig } from '@heddle/package';
import type { Capability } from '@heddle/placement';
import type {
  Admission,
  ControlMode,
  InstanceHandle,
  InstanceStatus,
  LinkSecurity,
  NetworkExposure,
  Preemption,
  RunEvidence,
  WorkloadRuntime,
} from './contract.js';
import { RuntimeError } from './errors.js';
import { deriveInstanceId } from './instance-id.js';
import { LineTail } from './output-buffer-lines.js';
import { WASI_DATA_DIR, wasiArgv, wasiEnv } from './wasi-args.js';
import { wasiEvidence } from './wasi-evidence.js';
import { type CappedWasmModule, capWasmMemory, hasWasmHeader } from './wasi-module.js';
import { probeWasi } from './wasi-probe.js';
import { spawnWasiRun, type WasiRun } from './wasi-process.js';
import type { RuntimeWorkload, WorkloadConfig } from './workload.js';

/** The variant the WASI adapter runs. */
export const WASI_VARIANT = 'wasm32-wasi';

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
}

interface Instance {
  readonly handle: InstanceHandle;
  readonly workload: RuntimeWorkload;
  readonly config: WorkloadConfig;
  readonly module: CappedWasmModule;
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly log: LineTail;
  state: InstanceStatus['state'];
  runs: number;
  stopping: boolean;
  current?: WasiRun;
  timer?: NodeJS.Timeout;
  startedAtMs?: number;
  last?: RunEvidence;
  detail?: string;
}

function verifiedOf(workload: RuntimeWorkload): VerifiedWorkload<CogBody> {
  if (workload.source.type !== 'package') {
    throw new RuntimeError('admission', 'source: the WASI adapter does not take store pins', {
      field: 'source',
    });
  }
  return workload.source.verified;
}

/**
 * The WASI adapter (id and route `wasi`): runs a cog's `wasm32-wasi` variant under Node's `node:wasi`
 * (preview1) in a separate runner process per run, which stop can kill whatever the guest does. The
 * guest sees only `/data` (the instance's data directory), argv and environment from the host
 * contract, no sockets; its linear memory is capped at `min(ram_mb, maxMemoryMb)` by rewriting the
 * module's declared maximum (see docs/runtimes.md, "WASI adapter").
 */
export class WasiRuntime implements WorkloadRuntime {
  readonly id: string = 'wasi';
  readonly route: string = 'wasi';
  readonly #options: Required<WasiRuntimeOptions>;
  readonly #instances = new Map<string, Instance>();
  #probe: Promise<readonly Capability[]> | undefined;

  /** An adapter with the given limits. */
  constructor(options: WasiRuntimeOptions = {}) {
    this.#options = {
      maxMemoryMb: options.maxMemoryMb ?? 256,
      runnerHeapMb: options.runnerHeapMb ?? 64,
      outputBytes: options.outputBytes ?? 64 * 1024,
      logLines: options.logLines ?? 1000,
      consoleTimeoutMs: options.consoleTimeoutMs ?? 30_000,
    };
  }

  /** `runtime.wasi`, probed once by running a tiny module in a runner process; none when that fails. */
  provides(): Promise<readonly Capability[]> {
    this.#probe ??= probeWasi(this.#options.maxMemoryMb);
    return this.#probe;
  }

  /** Refuses store pins, a package without a `wasm32-wasi` variant, and a file that is not wasm. */
  async admit(workload: RuntimeWorkload): Promise<Admission> {
    const verified = verifiedOf(workload);
    const variant = verified.body.variants[WASI_VARIANT];
    if (variant === undefined || variant.route !== 'wasi' || variant.arch !== 'wasm32') {
      throw new RuntimeError('admission', `variants: the package has no ${WASI_VARIANT} variant`, {
        field: 'variants',
      });
    }
    const file = verified.files.find((f) => f.path === variant.file);
    if (file === undefined) {
      throw new RuntimeError('admission', `variant.file: ${variant.file} is not a verified file`, {
        field: 'variant.file',
      });
    }
    const header = new Uint8Array(8);
    try {
      const fh = await open(file.absolutePath, 'r');
      try {
        await fh.read(header, 0, 8, 0);
      } finally {
        await fh.close();
      }
    } catch (err) {
      throw new RuntimeError('admission', `variant.file: ${variant.file} cannot be read`, {
        field: 'variant.file',
        cause: err,
      });
    }
    if (!hasWasmHeader(header)) {
      throw new RuntimeError('admission', `variant.file: ${variant.file} is not a WebAssembly 1.0 module`, {
        field: 'variant.file',
      });
    }
    const mb = this.#capMb(verified.body);
    return {
      runtime: this.id,
      variant: WASI_VARIANT,
      arch: 'wasm32',
      emulated: false,
      notes: [
        `WASI preview1 under node:wasi in a runner process`,
        `linear memory capped at ${mb} MiB`,
        `preopened: ${WASI_DATA_DIR} only; no sockets`,
      ],
    };
  }

  /** Validates config, reads and re-hashes the module, caps its memory, compiles it, makes the data dir. */
  async load(workload: RuntimeWorkload, config: WorkloadConfig): Promise<InstanceHandle> {
    await this.admit(workload);
    const verified = verifiedOf(workload);
    const body = verified.body;
    let values: Record<string, JsonValue>;
    try {
      values = validateCogConfig(body.config, config.values);
    } catch (err) {
      if (err instanceof PackageError) {
        throw new RuntimeError('invalid_config', err.message, { field: err.field ?? 'config', cause: err });
      }
      throw err;
    }
    const mode = config.runMode;
    if (mode.type === 'interval' && (!Number.isSafeInteger(mode.secs) || mode.secs < 1)) {
      throw new RuntimeError('invalid_config', 'runMode.secs: expected an integer of at least 1', {
        field: 'runMode.secs',
      });
    }
    if (!isAbsolute(config.host.dataDir)) {
      throw new RuntimeError('invalid_config', 'host.dataDir: expected an absolute path', {
        field: 'host.dataDir',
      });
    }
    const instanceId = deriveInstanceId(workload.id, workload.ref, config.values, mode, config.host.nodeId);
    const existing = this.#instances.get(instanceId);
    if (existing !== undefined) return existing.handle;

    const variant = body.variants[WASI_VARIANT];
    const file = verified.files.find((f) => f.path === variant?.file);
    if (variant === undefined || file === undefined)
      throw new RuntimeError('admission', 'variants: vanished');
    const bytes = new Uint8Array(await readFile(file.absolutePath));
    if (blake3Hex(bytes) !== file.blake3) {
      throw new RuntimeError('admission', `variant.file: ${file.path} changed since it was verified`, {
        field: 'variant.file',
      });
    }
    const module = capWasmMemory(bytes, Math.max(1, Math.floor(this.#capMb(body) * 16)));
    await checkModule(module);
    const argv = wasiArgv(`${workload.id}.wasm`, mode, values);
    const env = wasiEnv(config.host, instanceId);
    try {
      mkdirSync(config.host.dataDir, { recursive: true, mode: 0o700 });
    } catch (err) {
      throw new RuntimeError('runtime', `host.dataDir: cannot create ${config.host.dataDir}`, {
        field: 'host.dataDir',
        cause: err,
      });
    }
    const handle: InstanceHandle = {
      instanceId,
      runtime: this.id,
      workloadId: workload.id,
      version: workload.version,
    };
    this.#instances.set(instanceId, {
      handle,
      workload,
      config: { ...config, values },
      module,
      argv,
      env,
      log: new LineTail(this.#options.logLines),
      state: 'loaded',
      runs: 0,
      stopping: false,
    });
    return handle;
  }

  /**
   * Runner processes do not survive the host that spawned them being replaced, and the adapter keeps
   * no state on disk: adopt accepts only an instance this adapter object still knows (a no-op) and
   * refuses others with `unknown_instance`, so the host loads them again.
   */
  async adopt(handle: InstanceHandle, _workload: RuntimeWorkload): Promise<void> {
    this.#get(handle);
  }

  /** Starts the run loop: one run (`once`, `listener`) or a run every `secs` after the last ended. */
  async start(handle: InstanceHandle): Promise<void> {
    const inst = this.#get(handle);
    if (inst.current !== undefined || inst.timer !== undefined) {
      throw new RuntimeError('runtime', `instance ${inst.handle.instanceId} is already running`);
    }
    inst.stopping = false;
    this.#run(inst);
  }

  /** SIGTERM to the runner, SIGKILL after `graceMs`; the evidence of the run it ended (or the last). */
  async stop(handle: InstanceHandle, graceMs: number): Promise<RunEvidence> {
    const inst = this.#get(handle);
    inst.stopping = true;
    if (inst.timer !== undefined) clearTimeout(inst.timer);
    inst.timer = undefined;
    const run = inst.current;
    if (run !== undefined) {
      const result = await run.stop(graceMs);
      const evidence = wasiEvidence(inst.handle.instanceId, inst.argv, result, inst.module, {
        stopped: true,
      });
      inst.last = evidence;
      inst.state = 'stopped';
      return evidence;
    }
    if (inst.state === 'running' || inst.state === 'loaded') inst.state = 'stopped';
    return (
      inst.last ?? {
        instanceId: inst.handle.instanceId,
        args: inst.argv,
        exitCode: null,
        signal: null,
        startedAtMs: null,
        endedAtMs: null,
        killed: false,
        stdout: '',
        stdoutTruncatedBytes: 0,
        stderr: '',
        stderrTruncatedBytes: 0,
        notes: ['not running'],
      }
    );
  }

  /** Forgets the instance (its data directory is kept: it is the instance's data). */
  async unload(handle: InstanceHandle): Promise<void> {
    const inst = this.#get(handle);
    if (inst.current !== undefined || inst.timer !== undefined) {
      throw new RuntimeError('runtime', `instance ${inst.handle.instanceId} is running: stop it first`);
    }
    this.#instances.delete(inst.handle.instanceId);
  }

  /** The instance's state; `unknown` for an id this adapter does not know. */
  async status(handle: InstanceHandle): Promise<InstanceStatus> {
    const inst = this.#instances.get(handle.instanceId);
    if (inst === undefined) return { instanceId: handle.instanceId, state: 'unknown' };
    return {
      instanceId: handle.instanceId,
      state: inst.state,
      ...(inst.current?.pid !== undefined ? { pid: inst.current.pid } : {}),
      ...(inst.startedAtMs !== undefined ? { startedAtMs: inst.startedAtMs } : {}),
      ...(inst.last !== undefined ? { lastExitCode: inst.last.exitCode, lastSignal: inst.last.signal } : {}),
      runs: inst.runs,
      ...(inst.detail !== undefined ? { detail: inst.detail } : {}),
    };
  }

  /** The last `lines` lines of guest output (stderr lines prefixed `stderr: `). */
  async logs(handle: InstanceHandle, lines: number): Promise<readonly string[]> {
    return this.#get(handle).log.last(lines);
  }

  controlMode(): ControlMode {
    return 'managed';
  }

  linkSecurity(): LinkSecurity {
    return 'local';
  }

  networkExposure(): NetworkExposure {
    return 'none';
  }

  /** None: a WASI guest has no sensor feed to take over. */
  async consolePreemptions(_handle: InstanceHandle): Promise<readonly Preemption[]> {
    return [];
  }

  /** Nothing to preempt (see {@link consolePreemptions}). */
  async preempt(_preemption: Preemption): Promise<void> {}

  /** Nothing to resume (see {@link consolePreemptions}). */
  async resume(_preemption: Preemption): Promise<void> {}

  /**
   * Runs the module once with `--console <command>` and the config values; only commands the package
   * declares (`invalid_config` otherwise). Killed after `consoleTimeoutMs` (noted as `timeout`).
   */
  async console(handle: InstanceHandle, command: string): Promise<RunEvidence> {
    const inst = this.#get(handle);
    const declared = verifiedOf(inst.workload).body.console.map((c) => c.name);
    if (!declared.includes(command)) {
      throw new RuntimeError(
        'invalid_config',
        `command: ${JSON.stringify(command)} is not a declared console command`,
        {
          field: 'command',
        },
      );
    }
    const argv = wasiArgv(`${inst.workload.id}.wasm`, { type: 'console', command }, inst.config.values);
    const run = this.#spawn(inst, argv, false);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      void run.stop(1000);
    }, this.#options.consoleTimeoutMs);
    const result = await run.done;
    clearTimeout(timer);
    return wasiEvidence(inst.handle.instanceId, argv, result, inst.module, { timedOut });
  }

  #capMb(body: CogBody): number {
    return Math.min(body.resources.ram_mb, this.#options.maxMemoryMb);
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

  #spawn(inst: Instance, argv: readonly string[], log: boolean): WasiRun {
    const m = inst.module;
    return spawnWasiRun({
      bytes: m.bytes,
      args: argv,
      env: inst.env,
      preopens: { [WASI_DATA_DIR]: inst.config.host.dataDir },
      capPages: m.capPages,
      ...(m.imported
        ? {
            importedMemory: {
              module: m.imported.module,
              name: m.imported.name,
              initial: m.imported.min,
              maximum: m.imported.cappedMax,
            },
          }
        : {}),
      runnerHeapMb: this.#options.runnerHeapMb,
      outputBytes: this.#options.outputBytes,
      ...(log
        ? {
            onOutput: (stream: 'stdout' | 'stderr', chunk: Buffer) =>
              inst.log.push(stream, chunk.toString('utf8'), stream === 'stderr' ? 'stderr: ' : ''),
          }
        : {}),
    });
  }

  #run(inst: Instance): void {
    inst.timer = undefined;
    const run = this.#spawn(inst, inst.argv, true);
    inst.current = run;
    inst.runs += 1;
    inst.startedAtMs = run.startedAtMs;
    inst.state = 'running';
    inst.detail = undefined;
    void run.done.then((result) => {
      if (inst.current !== run) return;
      inst.current = undefined;
      inst.log.flush({ stderr: 'stderr: ' });
      inst.last = wasiEvidence(inst.handle.instanceId, inst.argv, result, inst.module, {
        stopped: inst.stopping,
      });
      if (inst.stopping) {
        inst.state = 'stopped';
      } else if (inst.config.runMode.type === 'interval') {
        const secs = inst.config.runMode.secs;
        inst.detail = `waiting ${secs} s for the next interval`;
        inst.timer = setTimeout(() => this.#run(inst), secs * 1000);
      } else {
        inst.state = result.exitCode === 0 ? 'exited' : 'failed';
      }
    });
  }
}

/** The part of the WebAssembly JS API used here (the repo's TypeScript lib has no DOM types). */
interface WasmApi {
  compile(bytes: Uint8Array): Promise<object>;
  Module: {
    exports(m: object): { name: string; kind: string }[];
    imports(m: object): { module: string; name: string; kind: string }[];
  };
}

/** Compiles the capped module and checks it has `_start` and imports only WASI preview1 (and its memory). */
async function checkModule(module: CappedWasmModule): Promise<void> {
  const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
  let compiled: object;
  try {
    compiled = await wasm.compile(module.bytes);
  } catch (err) {
    throw new RuntimeError(
      'admission',
      `variant.file: the module does not compile: ${(err as Error).message}`,
      {
        field: 'variant.file',
        cause: err,
      },
    );
  }
  if (!wasm.Module.exports(compiled).some((e) => e.name === '_start' && e.kind === 'function')) {
    throw new RuntimeError(
      'admission',
      'variant.file: the module exports no _start function (a WASI command)',
      {
        field: 'variant.file',
      },
    );
  }
  for (const imp of wasm.Module.imports(compiled)) {
    const isMemory = imp.kind === 'memory' && module.imported !== undefined;
    if (imp.module !== 'wasi_snapshot_preview1' && !isMemory) {
      throw new RuntimeError(
        'admission',
        `variant.file: the module imports ${imp.module}.${imp.name}, which the WASI runner does not provide`,
        { field: 'variant.file' },
      );
    }
  }
}
