import type { Capability } from '@heddle/placement';
import type { RuntimeWorkload, WorkloadConfig } from './workload.js';

/** What an adapter's admission self-check found: it can run the workload, and how. */
export interface Admission {
  /** The adapter's id (`native`, `wasi`, `container`, `remote.api`). */
  readonly runtime: string;
  /** The variant chosen (`x86_64-native`), or the store pin's ref for store pins. */
  readonly variant: string;
  /** The architecture it will run as (`x86_64`, `aarch64`, `wasm32`, ...). */
  readonly arch: string;
  /** True when it runs under emulation (a container image of another arch). */
  readonly emulated: boolean;
  /** Anything an operator should know (for example "script: runs under /bin/sh"). */
  readonly notes: readonly string[];
}

/**
 * A loaded instance. Handles are plain data so that a host can persist them and {@link
 * WorkloadRuntime.adopt} them after a restart.
 */
export interface InstanceHandle {
  /** Derived with `deriveInstanceId`: stable for (workload ref, config, run mode, node). */
  readonly instanceId: string;
  /** The adapter that owns it. */
  readonly runtime: string;
  readonly workloadId: string;
  readonly version: string;
  /** True when loading installed something on a remote store (Seed adapter). */
  readonly storeInstalled?: boolean;
}

/** Where an instance is in its life, as the adapter sees it. */
export type InstanceState = 'loaded' | 'running' | 'exited' | 'stopped' | 'failed' | 'unknown';

/** An instance's status: read-only, never gated. */
export interface InstanceStatus {
  readonly instanceId: string;
  readonly state: InstanceState;
  /** Process id, when one runs. */
  readonly pid?: number;
  /** When the current or last run started (Unix ms). */
  readonly startedAtMs?: number;
  /** Exit code of the last run that ended, or null when it was ended by a signal. */
  readonly lastExitCode?: number | null;
  /** Signal that ended the last run, when one did. */
  readonly lastSignal?: string | null;
  /** Runs started since load (interval mode counts each run). */
  readonly runs?: number;
  /** Free text for operators (for example "waiting 45 s for the next interval"). */
  readonly detail?: string;
}

/**
 * What a run left behind: evidence of what happened, chained (bounded) and returned by stop and
 * console. Output is the tail kept in a bounded buffer; the `*TruncatedBytes` fields say how much
 * was dropped from the front.
 */
export interface RunEvidence {
  readonly instanceId: string;
  /** The argv the process got (program first), or the console command. */
  readonly args: readonly string[];
  /** Exit code, or null when the process was ended by a signal or never started. */
  readonly exitCode: number | null;
  /** The signal that ended it (`SIGTERM`, `SIGKILL`), or null. */
  readonly signal: string | null;
  readonly startedAtMs: number | null;
  readonly endedAtMs: number | null;
  /** True when the stop had to escalate to SIGKILL (or an equivalent hard kill). */
  readonly killed: boolean;
  /** Tail of standard output (UTF-8, bounded). */
  readonly stdout: string;
  readonly stdoutTruncatedBytes: number;
  /** Tail of standard error (UTF-8, bounded). */
  readonly stderr: string;
  readonly stderrTruncatedBytes: number;
  /** Why a run ended abnormally (`memory limit exceeded`, `timeout`), when the adapter knows. */
  readonly notes: readonly string[];
  /** Workloads stopped so that a console run could have the sensor feed (set by the WorkloadHost). */
  readonly stoppedForConsole?: readonly string[];
}

/** Who controls an instance's process: this adapter (`managed`) or someone else it only watches. */
export type ControlMode = 'managed' | 'adopted';

/** How the adapter reaches what it drives: in-process/local, TLS with a pinned key, or plain HTTP. */
export type LinkSecurity = 'local' | 'tls_pinned' | 'plain_local_link';

/** The most network an instance gets (the gate's `network` context): `none < lan < egress`. */
export type NetworkExposure = 'none' | 'lan' | 'egress';

/** A workload that must be stopped for a console run (it holds the sensor feed). */
export interface Preemption {
  readonly registry: string;
  readonly workloadId: string;
  readonly version: string;
  /** The instance, when this host loaded it. */
  readonly instanceId?: string;
  /**
   * False when the operator never pinned this workload (someone else installed it): its stop and
   * resume are then gated and chained at package trust `unsigned`, never as an operator attestation.
   * Absent: pinned (or loaded by this host).
   */
  readonly operatorPinned?: boolean;
}

/**
 * The runtime contract (docs/runtimes.md, "The contract"). One adapter per route; the WorkloadHost wraps one adapter
 * and gates and chains every transition, so adapters do neither. Every method refuses with a
 * `RuntimeError` (`admission`, `runtime`, `unknown_instance`, `invalid_config`).
 */
/**
 * What the WorkloadHost hears of the runs an adapter makes by itself (interval re-runs) and of every
 * run that ends by itself, so that each run passes the gate and each exit is chained. Set with
 * {@link WorkloadRuntime.watchRuns}.
 */
export interface RunHooks {
  /**
   * Asked before every run the adapter starts by itself (interval runs after the first, the first
   * run after an adopt). Resolves to let the run start; rejects to refuse it: the run is not started,
   * no further run is scheduled, and the instance goes `failed` with `re-run refused: <message>` as
   * its detail.
   */
  beforeRun(run: number): Promise<void>;
  /**
   * Told of every run that ended without a stop (exited, crashed, refused before it started), with
   * its evidence; `run` counts the runs since load (1 for the first).
   */
  runEnded(run: number, evidence: RunEvidence): void;
}

export interface WorkloadRuntime {
  /** Adapter id: `native`, `wasi`, `container`, `remote.api`. */
  readonly id: string;
  /** The cog route this adapter serves (`native`, `wasi`, `container`) or `remote.api`. */
  readonly route: string;
  /** The capabilities it can really serve on this node, probed (not claimed). */
  provides(): Promise<readonly Capability[]>;
  /** Self-check before anything runs: can this adapter run this workload here, and how? */
  admit(workload: RuntimeWorkload): Promise<Admission>;
  /** Prepares an instance (directories, validated argv, image pull); does not start it. */
  load(workload: RuntimeWorkload, config: WorkloadConfig): Promise<InstanceHandle>;
  /** Re-attaches an instance loaded before a restart of the host process. */
  adopt(handle: InstanceHandle, workload: RuntimeWorkload): Promise<void>;
  /**
   * Ends whatever still runs of an instance loaded before a restart that the host could not adopt
   * (its package no longer verifies, admission or the gate refused it), knowing only its handle:
   * a host that reports an instance lost must not keep a copy of it running. Resolves true when
   * something was stopped. Optional: an adapter whose runs cannot outlive the host needs none.
   */
  abandon?(handle: InstanceHandle, graceMs: number): Promise<boolean>;
  /** Starts (or, for `once`, runs in the background) a loaded instance. */
  start(handle: InstanceHandle): Promise<void>;
  /** Stops: SIGTERM (or equivalent), then after `graceMs` a hard kill; returns the evidence. */
  stop(handle: InstanceHandle, graceMs: number): Promise<RunEvidence>;
  /** Removes what load prepared. The instance must not be running. */
  unload(handle: InstanceHandle): Promise<void>;
  /** The instance's status; `unknown` for an id the adapter does not know. */
  status(handle: InstanceHandle): Promise<InstanceStatus>;
  /** The last `lines` lines of output (stdout and stderr interleaved as captured). */
  logs(handle: InstanceHandle, lines: number): Promise<readonly string[]>;
  controlMode(): ControlMode;
  linkSecurity(): LinkSecurity;
  networkExposure(): NetworkExposure;
  /** Workloads that must stop for a console run of this instance (none for most adapters). */
  consolePreemptions(handle: InstanceHandle): Promise<readonly Preemption[]>;
  preempt(preemption: Preemption): Promise<void>;
  resume(preemption: Preemption): Promise<void>;
  /** Runs one console command of the instance (only commands the package declares). */
  console(handle: InstanceHandle, command: string): Promise<RunEvidence>;
  /**
   * Installs the hooks every later run of the instance goes through (the WorkloadHost calls it after
   * each load and adopt). Adapters that start runs by themselves (interval mode) must implement it;
   * `unknown_instance` for a handle the adapter does not hold.
   */
  watchRuns?(handle: InstanceHandle, hooks: RunHooks): void;
}

/** Convenience for adapters: the config a load was given, as the adapter keeps it per instance. */
export interface LoadedInstance {
  readonly handle: InstanceHandle;
  readonly workload: RuntimeWorkload;
  readonly config: WorkloadConfig;
}
