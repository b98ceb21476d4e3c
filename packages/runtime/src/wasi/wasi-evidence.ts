import type { RunEvidence } from '../contract.js';
import { type CappedWasmModule, WASM_PAGE_BYTES } from './wasi-module.js';
import { WASI_SETUP_EXIT_CODE, WASI_TRAP_EXIT_CODE, type WasiRunResult } from './wasi-process.js';

/** How a run was ended from outside, for the evidence notes. */
export interface WasiEndContext {
  /** The run was ended by a stop. */
  readonly stopped?: boolean;
  /** The run was ended because it ran past its time (a console run). */
  readonly timedOut?: boolean;
}

/**
 * The evidence of one run of the runner: exit code, signal, timings, the bounded output, and notes on
 * why it ended abnormally: `trap: <message>`, `memory limit exceeded` (inferred: the run failed or trapped
 * while its linear memory was in the top half of a binding cap), `module failed to start`, `killed after grace`, `timeout`,
 * `time limit exceeded` (wall clock, `maxRunMs`), `cpu time limit exceeded` (SIGXCPU, `cpuSeconds`),
 * `runner aborted` (the runner's own JS heap limit or a crash).
 */
export function wasiEvidence(
  instanceId: string,
  args: readonly string[],
  result: WasiRunResult,
  module: CappedWasmModule,
  context: WasiEndContext = {},
): RunEvidence {
  const notes: string[] = [];
  const end = [...result.statuses].reverse().find((s) => s.event !== 'started');
  if (end?.event === 'trap') notes.push(`trap: ${end.message ?? 'unknown'}`);
  if (end?.event === 'error' || result.exitCode === WASI_SETUP_EXIT_CODE) {
    notes.push(`module failed to start: ${end?.message ?? 'unknown'}`);
  }
  const pages = end?.memoryPages;
  const failed = end?.event === 'trap' || (end?.event === 'exit' && end.code !== 0);
  // memory.grow failing is invisible from outside the guest, so this is inferred: the run failed while
  // its memory stood in the top half of a cap that binds (the module wanted more than the cap allows).
  if (typeof pages === 'number' && module.capBinds && failed && pages * 2 > module.capPages) {
    const mib = (module.capPages * WASM_PAGE_BYTES) / 1048576;
    notes.push(
      `memory limit exceeded: linear memory at ${pages} of ${module.capPages} pages (cap ${mib} MiB) when the run failed`,
    );
  }
  if (context.timedOut) notes.push('timeout');
  const overTime = result.timedOutAfterMs !== undefined && !context.stopped;
  if (overTime) {
    notes.push(`time limit exceeded: the run was stopped after ${result.timedOutAfterMs} ms (wall clock)`);
  }
  const overCpu = result.signal === 'SIGXCPU';
  if (overCpu) {
    notes.push(`cpu time limit exceeded: the run used ${result.cpuSeconds} s of CPU and was ended (SIGXCPU)`);
  }
  if (result.killed) notes.push('killed after grace (SIGKILL)');
  else if (context.stopped && result.signal !== null) notes.push(`stopped (${result.signal})`);
  if (!context.stopped && !context.timedOut && !overTime && !overCpu && result.signal !== null) {
    notes.push(`runner aborted by ${result.signal}`);
  }
  if (result.exitCode === WASI_TRAP_EXIT_CODE && end?.event !== 'trap') notes.push('runner aborted');
  return {
    instanceId,
    args: [...args],
    exitCode: result.exitCode,
    signal: result.signal,
    startedAtMs: result.startedAtMs,
    endedAtMs: result.endedAtMs,
    killed: result.killed,
    stdout: result.stdout.text(),
    stdoutTruncatedBytes: result.stdout.truncatedBytes,
    stderr: result.stderr.text(),
    stderrTruncatedBytes: result.stderr.truncatedBytes,
    notes,
  };
}
