import type { JsonValue } from '@heddle/envelope';
import { LIFECYCLE_STATES, type LifecycleState } from '@heddle/model';
import { z } from 'zod';
import { PLACEMENT_STATES, type PlacementState } from './state-store.js';

/** One instance of a host's `workload.status` listing, as the controller reads it. */
export interface ListedInstance {
  readonly instance_id: string;
  readonly decision_id: string | null;
  /** The node id that placed it. */
  readonly requester: string | null;
  readonly desired_running: boolean;
  /** The adapter's state (`loaded`, `running`, `exited`, ...). */
  readonly state: string;
  /** Run mode type (`once`, `interval`, `listener`). */
  readonly mode: string | null;
  /** The host's lifecycle state (hosts of issue 8 on). */
  readonly life: LifecycleState | null;
  /** Stopped by the host because the controller lease expired. */
  readonly lease_stopped: boolean;
  /** Supervisor restarts in the current budget window. */
  readonly restarts: number;
  /** Re-adopted after a restart of the host process. */
  readonly adopted: boolean;
}

/** An instance a host took down or could not re-adopt. */
export interface DepartedEntry {
  readonly instance_id: string;
  readonly reason: 'unloaded' | 'revoked' | 'lost';
  readonly at_ms: number;
}

/** A host's listing (`workload.status` without an instance id, with `include_departed`). */
export interface HostListing {
  readonly instances: readonly ListedInstance[];
  readonly departed: readonly DepartedEntry[];
  /** Decisions the host is still acting on. */
  readonly in_flight: readonly string[];
}

const Instance = z.looseObject({
  instance_id: z.string().min(1).max(256),
  decision_id: z.string().max(256).nullish(),
  requester: z.string().max(256).nullish(),
  desired_running: z.boolean().optional(),
  state: z.string().max(64).optional(),
  mode: z.looseObject({ type: z.string().max(32) }).nullish(),
  // cast: z.enum wants a non-empty tuple; LIFECYCLE_STATES is a non-empty frozen list
  life: z.enum(LIFECYCLE_STATES as [LifecycleState, ...LifecycleState[]]).optional(),
  lease_stopped: z.boolean().optional(),
  restarts: z.int().nonnegative().optional(),
  adopted: z.boolean().optional(),
});

const Listing = z.looseObject({
  instances: z.array(Instance).max(100_000),
  in_flight: z
    .array(z.looseObject({ decision_id: z.string().max(256) }))
    .max(100_000)
    .optional(),
  departed: z
    .array(
      z.looseObject({
        instance_id: z.string().min(1).max(256),
        reason: z.string().max(64),
        at_ms: z.number().nonnegative().optional(),
      }),
    )
    .max(100_000)
    .optional(),
});

/**
 * Parses a host's listing (zod at the boundary). A listing that does not parse is refused as a whole
 * (undefined, with the reason): reading it partly would make its missing instances look lost.
 * Departed entries with a reason this controller does not know are left out.
 */
export function parseListing(value: JsonValue): { listing: HostListing } | { error: string } {
  const r = Listing.safeParse(value);
  if (!r.success) {
    const i = r.error.issues[0];
    return { error: `listing ${i?.path.join('.') || '$'}: ${i?.message ?? 'invalid'}` };
  }
  const instances = r.data.instances.map(
    (i): ListedInstance => ({
      instance_id: i.instance_id,
      decision_id: i.decision_id ?? null,
      requester: i.requester ?? null,
      desired_running: i.desired_running ?? false,
      state: i.state ?? 'unknown',
      mode: i.mode?.type ?? null,
      life: i.life ?? null,
      lease_stopped: i.lease_stopped ?? false,
      restarts: i.restarts ?? 0,
      adopted: i.adopted ?? false,
    }),
  );
  const departed: DepartedEntry[] = [];
  for (const d of r.data.departed ?? []) {
    if (d.reason === 'unloaded' || d.reason === 'revoked' || d.reason === 'lost')
      departed.push({ instance_id: d.instance_id, reason: d.reason, at_ms: d.at_ms ?? 0 });
  }
  return {
    listing: { instances, departed, in_flight: (r.data.in_flight ?? []).map((d) => d.decision_id) },
  };
}

const CONTROLLER: ReadonlySet<string> = new Set(PLACEMENT_STATES);

/**
 * The controller state an instance is in by its host's word: its `life` when the host reports one
 * (transient host states such as `fetching` or `stopping` give none: wait for the next listing), else
 * derived from the adapter's state (`exited` is `finished` for a `once` run, still `running` between
 * runs of an interval, `stopped` otherwise). Undefined when it cannot be told.
 */
export function lifeOf(i: Pick<ListedInstance, 'life' | 'state' | 'mode'>): PlacementState | undefined {
  // cast: CONTROLLER.has(i.life) just said it is a placement state
  if (i.life !== null) return CONTROLLER.has(i.life) ? (i.life as PlacementState) : undefined;
  switch (i.state) {
    case 'running':
      return 'running';
    case 'loaded':
      return 'loaded';
    case 'stopped':
      return 'stopped';
    case 'failed':
      return 'failed';
    case 'exited':
      return i.mode === 'once' ? 'finished' : i.mode === 'interval' ? 'running' : 'stopped';
    default:
      return undefined;
  }
}
