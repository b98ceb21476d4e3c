import type { InstanceHandle, RunHooks } from '../contract.js';
import { RuntimeError } from '../errors.js';
import type { RunMode, RuntimeWorkload } from '../workload.js';
import { CONTAINER_LABELS, type ContainerCreateSpec } from './container-args.js';
import { type ContainerEngine, runEngineOk } from './container-engine.js';
import { type ContainerPsRow, parsePs } from './container-inspect.js';

/** Label recording an instance's run mode on its container (`once`, `listener`, `interval:<secs>`). */
export const RUN_MODE_LABEL = 'heddle.run_mode';

/** An instance the container adapter holds: its container and run-mode bookkeeping. */
export interface ContainerEntry {
  readonly handle: InstanceHandle;
  /** The container's name (`heddle-<instance id>`). */
  readonly name: string;
  readonly runMode: RunMode;
  readonly image: string;
  /** The cog arguments after the image. */
  readonly command: readonly string[];
  /** The create spec (absent for an adopted container). */
  readonly spec?: ContainerCreateSpec;
  readonly consoleCommands: readonly string[];
  runs: number;
  stopped: boolean;
  /** Bumped by start, stop and unload: an interval watcher of an older generation gives up. */
  generation: number;
  timer?: NodeJS.Timeout;
  nextRunAtMs?: number | undefined;
  /** The WorkloadHost's hooks: re-runs gated, exits reported (see `watchRuns`). */
  hooks?: RunHooks;
  /** Set when the hooks refused an interval re-run: why (the instance is `failed`). */
  refused?: string | undefined;
  /**
   * Set by adopt when the container's run had already ended: that run is history (its exit was
   * reported by the process that watched it), so the first `wait` after the adopt reports nothing.
   */
  endedBeforeAdopt?: boolean;
}

/** The value of {@link RUN_MODE_LABEL} for a run mode. */
export function runModeLabel(runMode: RunMode): string {
  return runMode.type === 'interval' ? `interval:${runMode.secs}` : runMode.type;
}

/** The run mode a {@link RUN_MODE_LABEL} value stands for (`listener` when it is missing or unknown). */
export function runModeOfLabel(label: string | undefined): RunMode {
  const modeLabel = label ?? 'listener';
  const secs = modeLabel.startsWith('interval:') ? Number(modeLabel.slice(9)) : 0;
  return secs > 0
    ? { type: 'interval', secs }
    : modeLabel === 'once'
      ? { type: 'once' }
      : { type: 'listener' };
}

/**
 * The container of an instance to adopt: the one carrying its `heddle.instance` label
 * (`unknown_instance` when none does), which must belong to `workload` (`runtime` otherwise).
 */
export async function findAdoptedContainer(
  engine: ContainerEngine,
  handle: InstanceHandle,
  workload: RuntimeWorkload,
): Promise<ContainerPsRow> {
  const r = await runEngineOk(engine, [
    'ps',
    '-a',
    '--filter',
    `label=${CONTAINER_LABELS.instance}=${handle.instanceId}`,
    '--format',
    'json',
  ]);
  const row = parsePs(r.stdout)[0];
  if (row === undefined)
    throw new RuntimeError(
      'unknown_instance',
      `instance ${handle.instanceId}: no container carries its label`,
      {
        field: 'instanceId',
      },
    );
  if (
    row.labels[CONTAINER_LABELS.workload] !== workload.id ||
    row.labels[CONTAINER_LABELS.version] !== workload.version
  )
    throw new RuntimeError(
      'runtime',
      `instance ${handle.instanceId}: container ${row.name} belongs to another workload`,
      { field: 'instanceId' },
    );
  return row;
}
