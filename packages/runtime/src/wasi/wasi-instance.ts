import type { InstanceHandle } from '../contract.js';
import { assertNoSymlinks, ensureDataDir } from '../local/data-dir.js';
import { emptyRunEvidence, RunLoop } from '../local/run-loop.js';
import { LineTail } from '../output/output-buffer-lines.js';
import type { RuntimeWorkload, WorkloadConfig } from '../workload.js';
import { WASI_DATA_DIR } from './wasi-args.js';
import { wasiEvidence } from './wasi-evidence.js';
import type { CappedWasmModule } from './wasi-module.js';
import { spawnWasiRun, type WasiRun, type WasiRunResult } from './wasi-process.js';

/** Limits of a runner process (from `WasiRuntimeOptions`). */
export interface WasiRunnerLimits {
  /** V8 heap limit of the runner in MiB. */
  readonly runnerHeapMb: number;
  /** Bytes of stdout and of stderr kept per run. */
  readonly outputBytes: number;
  /** Lines kept for `logs`. */
  readonly logLines: number;
  /** CPU seconds of a `once` or `interval` run and of a console run (0: none). */
  readonly cpuSeconds: number;
  /** CPU seconds of a listener's run (0: none). */
  readonly listenerCpuSeconds: number;
  /** Wall-clock limit of a `once` or `interval` run in ms (0: none). */
  readonly maxRunMs: number;
  /** The account runners run as; undefined: this process's user. */
  readonly user?: { readonly uid: number; readonly gid: number };
}

/** An instance the WASI adapter holds: the capped module, argv, environment, log tail and run loop. */
export interface WasiInstance {
  readonly handle: InstanceHandle;
  readonly workload: RuntimeWorkload;
  /** The load's config, its values validated (defaults filled in). */
  readonly config: WorkloadConfig;
  readonly module: CappedWasmModule;
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly log: LineTail;
  readonly loop: RunLoop<WasiRun, WasiRunResult>;
}

/** What {@link wasiInstance} is given. */
export type WasiInstanceParts = Omit<WasiInstance, 'log' | 'loop'>;

/**
 * A WASI instance whose run loop spawns a runner per run, feeds the guest's output into the log tail,
 * and ends a `once`/`listener` run `exited` on exit code 0 and `failed` otherwise.
 */
export function wasiInstance(parts: WasiInstanceParts, limits: WasiRunnerLimits): WasiInstance {
  const inst: WasiInstance = {
    ...parts,
    log: new LineTail(limits.logLines),
    loop: new RunLoop(parts.config.runMode, {
      launch: () => spawnWasi(inst, inst.argv, limits, 'run'),
      refused: (err) =>
        emptyRunEvidence(inst.handle.instanceId, inst.argv, [
          `run refused: ${err instanceof Error ? err.message : String(err)}`,
        ]),
      ended: (result, stopping) => {
        inst.log.flush({ stderr: 'stderr: ' });
        return {
          evidence: wasiEvidence(inst.handle.instanceId, inst.argv, result, inst.module, {
            stopped: stopping,
          }),
          state: result.exitCode === 0 ? 'exited' : 'failed',
        };
      },
    }),
  };
  return inst;
}

/**
 * Spawns one run of the instance's module with `argv`: `/data` preopened as its data directory, its
 * memory capped (an imported memory created at the cap), as `limits.user`, with the CPU and wall-clock
 * limits of its kind (a listener has no wall-clock limit; a console run's time is bounded by its
 * caller), output fed to the log tail for instance runs (`kind` `run`), not for console runs.
 * Refuses (`runtime`) when the data directory is or holds a symbolic link.
 */
export function spawnWasi(
  inst: WasiInstance,
  argv: readonly string[],
  limits: WasiRunnerLimits,
  kind: 'run' | 'console',
): WasiRun {
  const m = inst.module;
  const log = kind === 'run';
  const listener = kind === 'run' && inst.config.runMode.type === 'listener';
  assertNoSymlinks(inst.config.host.dataDir);
  if (limits.user !== undefined) ensureDataDir(inst.config.host.dataDir, limits.user);
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
    runnerHeapMb: limits.runnerHeapMb,
    outputBytes: limits.outputBytes,
    cpuSeconds: listener ? limits.listenerCpuSeconds : limits.cpuSeconds,
    ...(kind === 'run' && !listener ? { maxRunMs: limits.maxRunMs } : {}),
    ...(limits.user === undefined ? {} : { user: limits.user }),
    ...(log
      ? {
          onOutput: (stream: 'stdout' | 'stderr', chunk: Buffer) =>
            inst.log.push(stream, chunk.toString('utf8'), stream === 'stderr' ? 'stderr: ' : ''),
        }
      : {}),
  });
}
