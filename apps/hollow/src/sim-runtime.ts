import type { NetworkLevel } from '@heddle/model';
import { type CogRoute, deriveInstanceId, parseVariantName } from '@heddle/model';
import { validateCogConfig } from '@heddle/package';
import type { Capability } from '@heddle/placement';
import {
  type Admission,
  type ControlMode,
  checkRunMode,
  hostCogArch,
  type InstanceHandle,
  type InstanceStatus,
  type LinkSecurity,
  type Preemption,
  type RunEvidence,
  RuntimeError,
  type RuntimeWorkload,
  type WorkloadConfig,
  type WorkloadRuntime,
} from '@heddle/runtime';

/** How a simulated runtime behaves: its start latency and failure rate, and the dice it rolls. */
export interface SimulatedRuntimeOptions {
  /** The route it serves (`native` or `wasi`). */
  readonly route: Extract<CogRoute, 'native' | 'wasi'>;
  /** Time a start takes before it succeeds or fails (ms, default 0). */
  readonly startLatencyMs?: number;
  /** Probability (0 to 1) that a start fails with `runtime` (default 0). */
  readonly failureRate?: number;
  /** A number in [0, 1) for each start, to decide whether it fails (default `Math.random`). */
  readonly random?: () => number;
  /** The clock (Unix ms; default `Date.now`). */
  readonly now?: () => number;
}

interface SimInstance {
  readonly handle: InstanceHandle;
  state: 'loaded' | 'running' | 'stopped' | 'failed';
  runs: number;
  startedAtMs: number | undefined;
}

const NO_EVIDENCE = { stdout: '', stdoutTruncatedBytes: 0, stderr: '', stderrTruncatedBytes: 0 } as const;

/**
 * A runtime adapter that runs nothing: the one part of a hollow host that is not a real host's
 * (docs/hollow.md). It follows the runtime contract (docs/runtimes.md, "The contract") as the native
 * and WASI adapters do: admission picks the package's variant for this host's arch and route and
 * refuses (`admission`) a package without one; load validates the run mode and config values against
 * the package's schema (`invalid_config`) and derives the instance id the same way; start waits
 * `startLatencyMs` and then fails (`runtime`) with probability `failureRate`, or marks the instance
 * running; stop, unload and status act on that state. Instances live in memory only: after the hollow
 * host restarts they are gone (`adopt` refuses with `unknown_instance`, like a power loss that killed
 * the workloads).
 */
export class SimulatedRuntime implements WorkloadRuntime {
  readonly id: string;
  readonly route: string;
  readonly #arch: string;
  readonly #startLatencyMs: number;
  readonly #failureRate: number;
  readonly #random: () => number;
  readonly #now: () => number;
  readonly #instances = new Map<string, SimInstance>();
  /** Starts that failed on purpose (the failure rate), for tests and stats. */
  failedStarts = 0;

  constructor(options: SimulatedRuntimeOptions) {
    const rate = options.failureRate ?? 0;
    if (!(rate >= 0 && rate <= 1)) {
      throw new RuntimeError('invalid_config', `failureRate: expected 0 to 1, got ${rate}`, {
        field: 'failureRate',
      });
    }
    const latency = options.startLatencyMs ?? 0;
    if (!(Number.isFinite(latency) && latency >= 0)) {
      throw new RuntimeError('invalid_config', `startLatencyMs: expected >= 0, got ${latency}`, {
        field: 'startLatencyMs',
      });
    }
    this.id = options.route;
    this.route = options.route;
    this.#arch = options.route === 'wasi' ? 'wasm32' : (hostCogArch() ?? 'x86_64');
    this.#startLatencyMs = latency;
    this.#failureRate = rate;
    this.#random = options.random ?? Math.random;
    this.#now = options.now ?? Date.now;
  }

  /** The number of instances it holds (loaded, running or stopped). */
  get size(): number {
    return this.#instances.size;
  }

  /** `runtime.<route>`, with the attributes the real adapter's probe reports (`run_as: hollow`). */
  async provides(): Promise<readonly Capability[]> {
    const attrs: Record<string, string | number> =
      this.route === 'wasi'
        ? {
            wasi_version: 'preview1',
            engine: 'hollow',
            max_memory_mb: 256,
            preopens: 'data_dir',
            network: 'none',
          }
        : { arch: this.#arch, os: process.platform, run_as: 'hollow' };
    return [
      { id: `runtime.${this.route}`, attrs, provenance: 'probed', state: 'available', exclusive: false },
    ];
  }

  /** Picks the package's `<arch>-<route>` variant; `admission` when it has none. */
  async admit(workload: RuntimeWorkload): Promise<Admission> {
    if (workload.source.type !== 'package') {
      throw new RuntimeError('admission', 'source: a hollow host runs signed packages only', {
        field: 'source',
      });
    }
    const variants = Object.keys(workload.source.verified.body.variants);
    const variant = variants.find((v) => {
      const n = parseVariantName(v);
      return n !== undefined && n.route === this.route && n.arch === this.#arch;
    });
    if (variant === undefined) {
      throw new RuntimeError(
        'admission',
        `variants: the package has no ${this.#arch}-${this.route} variant`,
        {
          field: 'variants',
        },
      );
    }
    return {
      runtime: this.id,
      variant,
      arch: this.#arch,
      emulated: false,
      notes: ['simulated: nothing runs'],
    };
  }

  /** Validates the run mode and config values, then holds a `loaded` instance. */
  async load(workload: RuntimeWorkload, config: WorkloadConfig): Promise<InstanceHandle> {
    await this.admit(workload);
    checkRunMode(config.runMode);
    if (workload.source.type === 'package') {
      try {
        validateCogConfig(workload.source.verified.body.config, config.values);
      } catch (err) {
        throw new RuntimeError('invalid_config', err instanceof Error ? err.message : String(err), {
          field: 'config',
          cause: err,
        });
      }
    }
    const instanceId = deriveInstanceId(
      workload.id,
      workload.ref,
      config.values,
      config.runMode,
      config.host.nodeId,
    );
    const handle: InstanceHandle = {
      instanceId,
      runtime: this.id,
      workloadId: workload.id,
      version: workload.version,
    };
    if (!this.#instances.has(instanceId)) {
      this.#instances.set(instanceId, { handle, state: 'loaded', runs: 0, startedAtMs: undefined });
    }
    return handle;
  }

  /** Nothing survives a restart of a hollow host: `unknown_instance`. */
  async adopt(handle: InstanceHandle, _workload: RuntimeWorkload): Promise<void> {
    if (this.#instances.has(handle.instanceId)) return;
    throw new RuntimeError(
      'unknown_instance',
      `${handle.instanceId}: a simulated instance does not survive a restart`,
      {
        field: 'instanceId',
      },
    );
  }

  /** Waits the start latency; then fails with the failure rate (`runtime`), or runs. */
  async start(handle: InstanceHandle): Promise<void> {
    const inst = this.#get(handle);
    if (inst.state === 'running') {
      throw new RuntimeError('runtime', `${handle.instanceId} is already running`, { field: 'instanceId' });
    }
    if (this.#startLatencyMs > 0) await new Promise((r) => setTimeout(r, this.#startLatencyMs));
    if (this.#failureRate > 0 && this.#random() < this.#failureRate) {
      this.failedStarts++;
      inst.state = 'failed';
      throw new RuntimeError(
        'runtime',
        `${handle.instanceId}: simulated start failure (failure rate ${this.#failureRate})`,
      );
    }
    inst.state = 'running';
    inst.runs++;
    inst.startedAtMs = this.#now();
  }

  /** Marks it stopped; the evidence says it ended by SIGTERM. */
  async stop(handle: InstanceHandle, _graceMs: number): Promise<RunEvidence> {
    const inst = this.#get(handle);
    const wasRunning = inst.state === 'running';
    if (wasRunning) inst.state = 'stopped';
    return {
      instanceId: handle.instanceId,
      args: ['hollow'],
      exitCode: null,
      signal: wasRunning ? 'SIGTERM' : null,
      startedAtMs: inst.startedAtMs ?? null,
      endedAtMs: wasRunning ? this.#now() : null,
      killed: false,
      ...NO_EVIDENCE,
      notes: [],
    };
  }

  /** Forgets it; refused while it runs. */
  async unload(handle: InstanceHandle): Promise<void> {
    const inst = this.#get(handle);
    if (inst.state === 'running') {
      throw new RuntimeError('runtime', `${handle.instanceId} is running: stop it first`, {
        field: 'instanceId',
      });
    }
    this.#instances.delete(handle.instanceId);
  }

  /** Its simulated state; `unknown` for an id it does not hold. */
  async status(handle: InstanceHandle): Promise<InstanceStatus> {
    const inst = this.#instances.get(handle.instanceId);
    if (inst === undefined) return { instanceId: handle.instanceId, state: 'unknown' };
    return {
      instanceId: handle.instanceId,
      state: inst.state,
      runs: inst.runs,
      ...(inst.startedAtMs === undefined ? {} : { startedAtMs: inst.startedAtMs }),
      detail: 'simulated (hollow host)',
    };
  }

  /** No output: nothing runs. */
  async logs(handle: InstanceHandle, _lines: number): Promise<readonly string[]> {
    this.#get(handle);
    return [];
  }

  controlMode(): ControlMode {
    return 'managed';
  }

  linkSecurity(): LinkSecurity {
    return 'local';
  }

  /** What the real adapter of the route would expose (`egress` for native, `none` for WASI). */
  networkExposure(): NetworkLevel {
    return this.route === 'wasi' ? 'none' : 'egress';
  }

  async consolePreemptions(_handle: InstanceHandle): Promise<readonly Preemption[]> {
    return [];
  }

  async preempt(_preemption: Preemption): Promise<void> {}

  async resume(_preemption: Preemption): Promise<void> {}

  /** Refused: a hollow host has no console (`admission`). */
  async console(handle: InstanceHandle, _command: string): Promise<RunEvidence> {
    this.#get(handle);
    throw new RuntimeError('admission', 'a hollow host has no console', { field: 'command' });
  }

  #get(handle: InstanceHandle): SimInstance {
    const inst = this.#instances.get(handle.instanceId);
    if (inst === undefined) {
      throw new RuntimeError('unknown_instance', `no instance ${handle.instanceId}`, { field: 'instanceId' });
    }
    return inst;
  }
}
