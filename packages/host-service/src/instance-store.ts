import { renameSync } from 'node:fs';
import { join } from 'node:path';
import { parseJson, readTextBounded, writeFileAtomic } from '@heddle/envelope';
import {
  COG_ROUTES,
  type CogRoute,
  LIFECYCLE_STATES,
  type LifecycleState,
  type RunMode,
  RunModeSchema,
} from '@heddle/model';
import { type ConfigValue, ConfigValuesSchema } from '@heddle/protocol';
import { z } from 'zod';
import { errnoOf, messageOf } from './errors.js';
import type { PlacedInstance } from './instance-record.js';

/** The file a host keeps its instances in, under its data directory. */
export const INSTANCES_FILE = 'instances.json';

/** The `schema` of {@link INSTANCES_FILE}. */
export const INSTANCES_SCHEMA = 'heddle.host-instances.v1';

/** Largest accepted instances file: 16 MiB. */
export const MAX_INSTANCES_FILE_BYTES: number = 16 * 1024 * 1024;

/** One instance as {@link INSTANCES_FILE} keeps it: what a restarted host needs to adopt it again. */
export interface StoredInstance {
  readonly instance_id: string;
  /** The adapter's handle (plain data, see `InstanceHandle`). */
  readonly handle: {
    readonly instance_id: string;
    readonly runtime: string;
    readonly workload_id: string;
    readonly version: string;
    readonly store_installed?: boolean;
  };
  readonly route: CogRoute;
  readonly name: string;
  readonly version: string;
  readonly variant: string;
  readonly package_id: string;
  /** The held package it runs (`<data_dir>/packages/<manifest hash>/`, verified again on adoption). */
  readonly manifest_hash: string;
  readonly mode: RunMode;
  readonly values: Readonly<Record<string, ConfigValue>>;
  readonly decision_id: string;
  readonly last_decision_id: string;
  readonly requester: string;
  readonly placed_at_ms: number;
  readonly desired_running: boolean;
  readonly lease_stopped: boolean;
  /** Its lifecycle state when the file was written (informational: adoption reads the adapter). */
  readonly life: LifecycleState | null;
}

/** The whole file. */
export interface InstancesFile {
  readonly schema: typeof INSTANCES_SCHEMA;
  /** Format version (1). */
  readonly version: 1;
  readonly instances: readonly StoredInstance[];
}

const Hash = z.string().regex(/^[0-9a-f]{64}$/);
const Id = z.string().min(1).max(128);

const StoredInstanceSchema: z.ZodType<StoredInstance> = z.strictObject({
  instance_id: Id,
  handle: z.strictObject({
    instance_id: Id,
    runtime: Id,
    workload_id: Id,
    version: Id,
    store_installed: z.boolean().exactOptional(),
  }),
  route: z.enum(COG_ROUTES),
  name: Id,
  version: Id,
  variant: Id,
  package_id: Hash,
  manifest_hash: Hash,
  mode: RunModeSchema,
  values: ConfigValuesSchema,
  decision_id: z.string().max(128),
  last_decision_id: z.string().max(128),
  requester: z.string().max(128),
  placed_at_ms: z.int().nonnegative(),
  desired_running: z.boolean(),
  lease_stopped: z.boolean(),
  // cast: z.enum wants a non-empty tuple; LIFECYCLE_STATES is a non-empty frozen list
  life: z.enum(LIFECYCLE_STATES as [LifecycleState, ...LifecycleState[]]).nullable(),
});

/** Schema of {@link InstancesFile}. */
export const InstancesFileSchema: z.ZodType<InstancesFile> = z
  .strictObject({
    schema: z.literal(INSTANCES_SCHEMA),
    version: z.literal(1),
    instances: z.array(StoredInstanceSchema).max(100_000),
  })
  .refine((f) => f.instances.every((i) => i.handle.instance_id === i.instance_id), {
    message: 'an instance handle names another instance',
    path: ['instances'],
  });

/** What {@link InstanceStore.load} found. */
export interface LoadedInstances {
  readonly instances: readonly StoredInstance[];
  /** Set when the file could not be used: why, and where it was moved (`instances.json.bad-<ms>`). */
  readonly problem?: { readonly reason: string; readonly keptAs: string | undefined };
}

/** The stored form of a placed instance. */
export function storedInstanceOf(p: PlacedInstance): StoredInstance {
  const h = p.handle;
  return {
    instance_id: p.instanceId,
    handle: {
      instance_id: h.instanceId,
      runtime: h.runtime,
      workload_id: h.workloadId,
      version: h.version,
      ...(h.storeInstalled === undefined ? {} : { store_installed: h.storeInstalled }),
    },
    route: p.route,
    name: p.name,
    version: p.version,
    variant: p.variant,
    package_id: p.packageId,
    manifest_hash: p.manifestHash,
    mode: p.mode,
    values: p.values,
    decision_id: p.decisionId,
    last_decision_id: p.lastDecisionId,
    requester: p.requester,
    placed_at_ms: p.placedAtMs,
    desired_running: p.desiredRunning,
    lease_stopped: p.leaseStopped,
    life: p.life.state,
  };
}

/**
 * `<dataDir>/instances.json`: the instances a host placed, rewritten crash-safely (temporary file,
 * fsync, rename) on every change of the instance set or of what the operator wants of one, and read
 * once at start to adopt them again. A file that cannot be read or parsed never stops the host: it is
 * moved aside as `instances.json.bad-<ms>` (kept for the operator) and the host starts empty.
 */
export class InstanceStore {
  /** The file. */
  readonly path: string;
  readonly #now: () => number;

  /** The store of the host whose data directory is `dataDir`. */
  constructor(dataDir: string, now: () => number = Date.now) {
    this.path = join(dataDir, INSTANCES_FILE);
    this.#now = now;
  }

  /** Writes `instances` (replacing the file). Throws the file system's error. */
  save(instances: Iterable<PlacedInstance>): void {
    const file: InstancesFile = {
      schema: INSTANCES_SCHEMA,
      version: 1,
      instances: [...instances].map(storedInstanceOf),
    };
    writeFileAtomic(this.path, `${JSON.stringify(file)}\n`, { mode: 0o600 });
  }

  /** Reads the file: nothing when it does not exist; a bad one is moved aside and reported. */
  load(): LoadedInstances {
    let text: string;
    try {
      text = readTextBounded(this.path, MAX_INSTANCES_FILE_BYTES);
    } catch (err) {
      if (errnoOf(err) === 'ENOENT') return { instances: [] };
      return this.#setAside(`cannot read ${this.path}: ${messageOf(err)}`);
    }
    let value: unknown;
    try {
      value = parseJson(text, { maxBytes: MAX_INSTANCES_FILE_BYTES });
    } catch (err) {
      return this.#setAside(`${this.path}: ${messageOf(err)}`);
    }
    const r = InstancesFileSchema.safeParse(value);
    if (!r.success) {
      const issue = r.error.issues[0];
      const field = issue === undefined || issue.path.length === 0 ? '$' : issue.path.join('.');
      return this.#setAside(`${this.path}: ${field}: ${issue?.message ?? 'invalid'}`);
    }
    return { instances: r.data.instances };
  }

  #setAside(reason: string): LoadedInstances {
    const keptAs = `${this.path}.bad-${this.#now()}`;
    try {
      renameSync(this.path, keptAs);
      return { instances: [], problem: { reason, keptAs } };
    } catch {
      return { instances: [], problem: { reason, keptAs: undefined } };
    }
  }
}
