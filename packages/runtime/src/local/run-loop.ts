import type { InstanceState, InstanceStatus, RunEvidence, RunHooks } from '../contract.js';
import type { RunMode } from '../workload.js';

/** One run of an instance's process as a {@link RunLoop} drives it (a `NativeRun`, a `WasiRun`). */
export interface LoopRun<Result> {
  /** The process id (undefined when the spawn failed). */
  readonly pid: number | undefined;
  readonly startedAtMs: number;
  /** Resolves with the run's result once it has ended; never rejects. */
  readonly done: Promise<Result>;
  /** Ends the run (SIGTERM, SIGKILL after `graceMs`); resolves with its result. */
  stop(graceMs: number): Promise<Result>;
}

/** What an adapter makes of a run that ended (see {@link RunLoopHooks.ended}). */
export interface RunEnd {
  /** The run's evidence: it becomes {@link RunLoop.last}. */
  readonly evidence: RunEvidence;
  /** Set when the process never started: the loop settles in `failed` with this as its detail. */
  readonly failedToStart?: string;
  /** The state a `once` or `listener` run settles in. */
  readonly state: 'exited' | 'failed';
}

/** The adapter's part of a {@link RunLoop}. */
export interface RunLoopHooks<Run extends LoopRun<Result>, Result> {
  /** Spawns one run now; may throw to refuse it (a failed pre-run check). */
  launch(): Run;
  /** The evidence of a run `launch` refused (it becomes {@link RunLoop.last}). */
  refused?(err: unknown): RunEvidence;
  /** Reads the result of a run that ended; `stopping` when a stop ended it. */
  ended(result: Result, stopping: boolean): RunEnd;
}

/**
 * The run-mode scheduling of an instance whose runs are child processes (native and WASI adapters):
 * `start` launches one run; when it ends, an `interval{secs}` instance runs again `secs` later
 * (detail `waiting <secs> s for the next interval`) until stopped, while `once` and `listener` settle
 * in the state the adapter reads from the result. With {@link watch} hooks, every run the loop starts
 * by itself first awaits `beforeRun` (a refusal settles it in `failed`, detail `re-run refused: ...`)
 * and every run that ends without a stop is reported to `runEnded`. Keeps the instance's state, run
 * count, last evidence and detail for `status`.
 */
export class RunLoop<Run extends LoopRun<Result>, Result> {
  /** Where the instance is (adapters also set it: stop, adopt). */
  state: InstanceState = 'loaded';
  /** Free text for operators. */
  detail: string | undefined;
  /** The evidence of the last run that ended or was stopped. */
  last: RunEvidence | undefined;
  /** Runs launched since load. */
  runs: number = 0;
  /** When the latest run was launched. */
  startedAtMs: number | undefined;
  readonly #runMode: RunMode;
  readonly #hooks: RunLoopHooks<Run, Result>;
  #current: Run | undefined;
  #timer: NodeJS.Timeout | undefined;
  #stopping = false;
  #watch: RunHooks | undefined;
  /** A re-run waiting for its gate (`beforeRun`). */
  #gating = false;
  /** Bumped by start and halt: a gate answer for an older generation launches nothing. */
  #generation = 0;

  /** A loop of `runMode` runs launched and read by `hooks`. */
  constructor(runMode: RunMode, hooks: RunLoopHooks<Run, Result>) {
    this.#runMode = runMode;
    this.#hooks = hooks;
  }

  /** The run in progress. */
  get current(): Run | undefined {
    return this.#current;
  }

  /** True from a stop until the next start. */
  get stopping(): boolean {
    return this.#stopping;
  }

  /** True while a run is in progress, the next interval run is scheduled, or it waits for its gate. */
  get busy(): boolean {
    return this.#current !== undefined || this.#timer !== undefined || this.#gating;
  }

  /** Installs the hooks later runs go through (see {@link RunHooks}). */
  watch(hooks: RunHooks): void {
    this.#watch = hooks;
  }

  /** Launches the first run now (it was gated by whoever called start). */
  start(): void {
    this.#stopping = false;
    this.#generation++;
    this.#gating = false;
    this.#runNow(true);
  }

  /** Marks the loop as stopping and cancels the next interval run; returns the run in progress, if any. */
  halt(): Run | undefined {
    this.#stopping = true;
    this.#generation++;
    this.#gating = false;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    return this.#current;
  }

  /**
   * The instance's status; its `pid` and `startedAtMs` are the current and latest run's unless
   * `observed` gives them (an adapter that also tracks processes it did not launch).
   */
  status(
    instanceId: string,
    observed?: { readonly pid: number | undefined; readonly startedAtMs: number | null | undefined },
  ): InstanceStatus {
    const pid = observed === undefined ? this.#current?.pid : observed.pid;
    const startedAtMs = observed === undefined ? this.startedAtMs : observed.startedAtMs;
    const last = this.last;
    return {
      instanceId,
      state: this.state,
      ...(pid === undefined ? {} : { pid }),
      ...(startedAtMs === undefined || startedAtMs === null ? {} : { startedAtMs }),
      ...(last === undefined ? {} : { lastExitCode: last.exitCode, lastSignal: last.signal }),
      runs: this.runs,
      ...(this.detail === undefined ? {} : { detail: this.detail }),
    };
  }

  #schedule(delayMs: number): void {
    if (this.#runMode.type === 'interval') {
      this.detail = `waiting ${this.#runMode.secs} s for the next interval`;
    }
    this.#timer = setTimeout(() => void this.#gatedRun(), delayMs);
  }

  /** A run the loop starts by itself: asks `beforeRun` first; a refusal settles the loop in `failed`. */
  async #gatedRun(): Promise<void> {
    this.#timer = undefined;
    const gate = this.#watch;
    if (gate !== undefined) {
      const generation = this.#generation;
      this.#gating = true;
      let refusal: string | undefined;
      try {
        await gate.beforeRun(this.runs + 1);
      } catch (err) {
        refusal = err instanceof Error ? err.message : String(err);
      }
      if (generation !== this.#generation || this.#stopping) return;
      this.#gating = false;
      if (refusal !== undefined) {
        this.state = 'failed';
        this.detail = `re-run refused: ${refusal}`;
        return;
      }
    }
    this.#runNow(false);
  }

  #runNow(initial = false): void {
    this.#timer = undefined;
    let run: Run;
    try {
      run = this.#hooks.launch();
    } catch (err) {
      // A refused run (a pre-run check failed): the loop settles in `failed`; start rethrows.
      this.state = 'failed';
      this.detail = `run refused: ${err instanceof Error ? err.message : String(err)}`;
      const evidence = this.#hooks.refused?.(err);
      if (evidence !== undefined) this.last = evidence;
      if (initial) throw err;
      if (evidence !== undefined) this.#watch?.runEnded(this.runs + 1, evidence);
      return;
    }
    this.#current = run;
    this.runs += 1;
    this.startedAtMs = run.startedAtMs;
    this.state = 'running';
    this.detail = undefined;
    void run.done.then((result) => {
      if (this.#current !== run) return;
      this.#current = undefined;
      const end = this.#hooks.ended(result, this.#stopping);
      this.last = end.evidence;
      if (!this.#stopping) this.#watch?.runEnded(this.runs, end.evidence);
      if (this.#stopping) {
        this.state = 'stopped';
      } else if (end.failedToStart !== undefined) {
        this.state = 'failed';
        this.detail = end.failedToStart;
      } else if (this.#runMode.type === 'interval') {
        const secs = this.#runMode.secs;
        this.#schedule(secs * 1000);
      } else {
        this.state = end.state;
      }
    });
  }
}

/**
 * A console run bounded in time: the run's result, or, when it is still running after `timeoutMs`,
 * the result of stopping it (`graceMs` between SIGTERM and SIGKILL) with `timedOut` set.
 */
export async function consoleRunResult<Result>(
  run: LoopRun<Result>,
  timeoutMs: number,
  graceMs: number = 1000,
): Promise<{ readonly result: Result; readonly timedOut: boolean }> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((r) => {
    timer = setTimeout(() => r('timeout'), timeoutMs);
  });
  const first = await Promise.race([run.done.then((result) => ({ result })), timedOut]);
  clearTimeout(timer);
  if (first !== 'timeout') return { result: first.result, timedOut: false };
  return { result: await run.stop(graceMs), timedOut: true };
}

/** The evidence of an instance with no run to show (never ran, or nothing is known of it). */
export function emptyRunEvidence(
  instanceId: string,
  args: readonly string[],
  notes: readonly string[],
): RunEvidence {
  return {
    instanceId,
    args,
    exitCode: null,
    signal: null,
    startedAtMs: null,
    endedAtMs: null,
    killed: false,
    stdout: '',
    stdoutTruncatedBytes: 0,
    stderr: '',
    stderrTruncatedBytes: 0,
    notes,
  };
}
