import { deriveInstanceId, type NetworkLevel } from '@heddle/model';
import type { Capability } from '@heddle/placement';
import {
  type Admission,
  type ControlMode,
  checkRunMode,
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
import { admitFromStore, pinFor, SEED_ARCH, SEED_RUNTIME_ID } from './seed-admission.js';
import type { SeedApi } from './seed-api.js';
import { checkPreemption, runSeedConsole, seedConsolePreemptions } from './seed-console.js';
import { logLines, SEED_EVIDENCE_LIMITS, type SeedEvidenceLimits } from './seed-evidence.js';
import { SEED_RECONCILE, type SeedReconcileOptions } from './seed-install.js';
import {
  assertNotStranded,
  assertUnderCap,
  instanceOf,
  pinnedOnSeed,
  runningCount,
  type SeedInstance,
  SeedSerial,
  seedCall,
} from './seed-instance.js';
import { seedStatusOf, stopSeedCog, unloadSeedCog } from './seed-lifecycle.js';
import { cogConfigOf, entryOf, loadSeedInstance } from './seed-load.js';
import { parseSeedPins, type SeedPin } from './seed-pins.js';

/** The Seed's default concurrency cap: at most this many cogs run at once. */
export const SEED_CONCURRENCY_CAP = 3;

/** Options of {@link SeedApiRuntime}. */
export interface SeedApiRuntimeOptions {
  /** The Seed's API client (a `SeedClient`, paired). */
  readonly api: SeedApi;
  /** The operator's pins (parsed again here: duplicates and malformed pins are refused). */
  readonly pins: readonly SeedPin[];
  /** The Seed's node id (instance ids are derived on it). */
  readonly nodeId: string;
  /** At most this many cogs run at once (default {@link SEED_CONCURRENCY_CAP}, 1..16). */
  readonly concurrencyCap?: number;
  /** How a slow or failed install is reconciled (default {@link SEED_RECONCILE}). */
  readonly reconcile?: SeedReconcileOptions;
  /** Evidence bounds (default {@link SEED_EVIDENCE_LIMITS}). */
  readonly evidence?: SeedEvidenceLimits;
  /** The clock, for evidence timestamps (default `Date.now`). */
  readonly now?: () => number;
}

/**
 * The `remote.api` adapter for a Cognitum Seed (docs/seed.md): drives the Seed's own HTTP API for
 * operator-pinned store cogs. Only pinned id@version (and sha256) install; at most `concurrencyCap` cogs
 * run; an install auto-starts, so load stops it and start is explicit; after an install the Seed is read
 * back and anything but the pinned version is undone; unload uninstalls only what this adapter
 * installed; a console run needs the sensor feed to itself, so the other running cogs are listed as
 * preemptions for the WorkloadHost. The bearer token stays in the client: nothing here holds it.
 */
export class SeedApiRuntime implements WorkloadRuntime {
  readonly id: string = SEED_RUNTIME_ID;
  readonly route: string = SEED_RUNTIME_ID;
  readonly #api: SeedApi;
  readonly #pins: readonly SeedPin[];
  readonly #nodeId: string;
  readonly #cap: number;
  readonly #reconcile: SeedReconcileOptions;
  readonly #limits: SeedEvidenceLimits;
  readonly #now: () => number;
  readonly #table = new Map<string, SeedInstance>();
  readonly #serial = new SeedSerial();

  /** An adapter for the Seed behind `options.api`; `invalid_config` for bad pins, node id or cap. */
  constructor(options: SeedApiRuntimeOptions) {
    this.#api = options.api;
    this.#pins = parseSeedPins([...options.pins]);
    if (!/^[A-Za-z0-9._-]{1,128}$/.test(options.nodeId)) {
      throw new RuntimeError('invalid_config', 'nodeId: expected 1-128 of [A-Za-z0-9._-]', {
        field: 'nodeId',
      });
    }
    this.#nodeId = options.nodeId;
    const cap = options.concurrencyCap ?? SEED_CONCURRENCY_CAP;
    if (!Number.isSafeInteger(cap) || cap < 1 || cap > 16) {
      throw new RuntimeError('invalid_config', 'concurrencyCap: expected an integer from 1 to 16', {
        field: 'concurrencyCap',
      });
    }
    this.#cap = cap;
    this.#reconcile = options.reconcile ?? SEED_RECONCILE;
    this.#limits = options.evidence ?? SEED_EVIDENCE_LIMITS;
    this.#now = options.now ?? Date.now;
  }

  /** `runtime.remote.api` (vendor, device, cap, arch) and `node.class.cognitum-seed`, both claimed. */
  async provides(): Promise<readonly Capability[]> {
    const base = { provenance: 'claimed', state: 'available', exclusive: false } as const;
    return [
      {
        id: 'runtime.remote.api',
        attrs: { vendor: 'cognitum', device: 'seed', concurrency_cap: this.#cap, arches_native: [SEED_ARCH] },
        ...base,
      },
      { id: 'node.class.cognitum-seed', attrs: {}, ...base },
    ];
  }

  /** Refuses (`admission`) anything but a pinned store cog that the Seed store lists exactly as pinned. */
  async admit(workload: RuntimeWorkload): Promise<Admission> {
    const pin = pinFor(this.#pins, workload);
    return admitFromStore(pin, workload, await seedCall('read the Seed store', () => this.#api.available()));
  }

  /**
   * Loads a pinned cog (see `loadSeedInstance`): installs it only when missing and under the cap,
   * stops it, checks the version (undoing a wrong one). Loading the same request again returns the
   * same handle; a second instance of a cog the Seed holds once is refused (`runtime`).
   */
  async load(workload: RuntimeWorkload, config: WorkloadConfig): Promise<InstanceHandle> {
    const pin = pinFor(this.#pins, workload);
    checkRunMode(config.runMode);
    const values = cogConfigOf(config.values);
    const instanceId = deriveInstanceId(
      workload.id,
      workload.ref,
      config.values,
      config.runMode,
      this.#nodeId,
    );
    return this.#serial.run(async () => {
      const known = this.#table.get(instanceId);
      if (known !== undefined) {
        assertNotStranded(known, 'load');
        return known.handle;
      }
      const other = [...this.#table.values()].find((e) => e.cogId === pin.id);
      if (other !== undefined) {
        throw new RuntimeError(
          'runtime',
          `${pin.id} is already loaded on this Seed as ${other.handle.instanceId}`,
          {
            field: 'workload.id',
          },
        );
      }
      const handle = { instanceId, runtime: this.id, workloadId: workload.id, version: workload.version };
      const ctx = { api: this.#api, cap: this.#cap, reconcile: this.#reconcile, table: this.#table };
      const entry = await loadSeedInstance(ctx, workload, pin, handle, values);
      this.#table.set(instanceId, entry);
      return entry.handle;
    });
  }

  /**
   * Re-attaches an instance after a restart: the cog must be pinned and still installed at the pinned
   * version (the Seed is the source of truth); `storeInstalled` of the handle says who installed it. A
   * handle this adapter installed whose cog the Seed holds at another version is adopted as a stranded
   * install (only unload, which uninstalls it, is allowed).
   */
  async adopt(handle: InstanceHandle, workload: RuntimeWorkload): Promise<void> {
    const pin = pinFor(this.#pins, workload);
    if (handle.runtime !== this.id || handle.workloadId !== pin.id || handle.version !== pin.version) {
      throw new RuntimeError(
        'invalid_config',
        `${handle.instanceId} is not a handle of ${pin.id}@${pin.version} on this Seed`,
        {
          field: 'instanceId',
        },
      );
    }
    await this.#serial.run(async () => {
      if (this.#table.has(handle.instanceId)) return;
      const other = [...this.#table.values()].find((e) => e.cogId === pin.id);
      if (other !== undefined) {
        throw new RuntimeError(
          'runtime',
          `${pin.id} is already loaded on this Seed as ${other.handle.instanceId}`,
        );
      }
      const list = await seedCall('list the installed cogs', () => this.#api.installed());
      const there = list.find((c) => c.id === pin.id);
      if (handle.storeInstalled === true && there !== undefined && there.version !== pin.version) {
        // Installed by this adapter (its intent was recorded) but not the pinned version: a stranded
        // install, adopted to be unloaded (which removes it) and nothing else.
        this.#table.set(handle.instanceId, entryOf(handle, pin, true, true));
        return;
      }
      pinnedOnSeed(list, pin.id, pin.version);
      this.#table.set(handle.instanceId, entryOf(handle, pin, handle.storeInstalled === true, false));
    });
  }

  /** Starts the cog: it must still be the pinned version, and starting it must fit under the cap. */
  async start(handle: InstanceHandle): Promise<void> {
    const e = instanceOf(this.#table, handle);
    assertNotStranded(e, 'start');
    await this.#serial.run(async () => {
      const installed = await seedCall('list the installed cogs', () => this.#api.installed());
      if (pinnedOnSeed(installed, e.cogId, e.version).running) return;
      assertUnderCap(runningCount(installed), this.#cap, `starting ${e.cogId}`);
      await seedCall(`start ${e.cogId}`, () => this.#api.start(e.cogId));
      e.startedAtMs = this.#now();
    });
  }

  /** Stops the cog (when it runs); the evidence is its recent output and errors from the Seed's logs. */
  async stop(handle: InstanceHandle, _graceMs: number): Promise<RunEvidence> {
    const e = instanceOf(this.#table, handle);
    return this.#serial.run(() => stopSeedCog(this.#api, e, this.#limits, this.#now));
  }

  /**
   * Forgets the instance; uninstalls the cog only when this adapter installed it (a stranded install
   * too), else leaves it installed and stopped. A failed uninstall keeps the instance (retry).
   */
  async unload(handle: InstanceHandle): Promise<void> {
    const e = instanceOf(this.#table, handle);
    await this.#serial.run(async () => {
      await unloadSeedCog(this.#api, e);
      this.#table.delete(handle.instanceId);
    });
  }

  /** The status from the Seed's installed list (see `seedStatusOf`); `unknown` for an id it does not hold. */
  async status(handle: InstanceHandle): Promise<InstanceStatus> {
    const e = this.#table.get(handle.instanceId);
    if (e === undefined) return { instanceId: handle.instanceId, state: 'unknown' };
    if (e.stranded) return seedStatusOf(e, []);
    const list = await seedCall('list the installed cogs', () => this.#api.installed()).catch(
      (err: Error) => err,
    );
    return seedStatusOf(e, list);
  }

  /** The last `lines` (1..10 000) lines of the cog's output, then its errors (prefixed `[error] `). */
  async logs(handle: InstanceHandle, lines: number): Promise<readonly string[]> {
    const e = instanceOf(this.#table, handle);
    if (!Number.isSafeInteger(lines) || lines < 1 || lines > 10_000) {
      throw new RuntimeError('invalid_config', 'lines: expected an integer from 1 to 10000', {
        field: 'lines',
      });
    }
    return logLines(await seedCall(`logs of ${e.cogId}`, () => this.#api.logs(e.cogId, lines)), lines);
  }

  /** `managed`: this adapter installs, starts and stops the cogs (through the Seed's API). */
  controlMode(): ControlMode {
    return 'managed';
  }

  /** `tls_pinned` over `https:` (the client pins the Seed's SPKI), `plain_local_link` over `http:`. */
  linkSecurity(): LinkSecurity {
    return this.#api.url.startsWith('https:') ? 'tls_pinned' : 'plain_local_link';
  }

  /** `egress`: the Seed's firmware, not Heddle, decides what its cogs reach, and the Seed has internet. */
  networkExposure(): NetworkLevel {
    return 'egress';
  }

  /** Every cog running on the Seed, this one included (they hold the sensor feed), Heddle's or not. */
  async consolePreemptions(handle: InstanceHandle): Promise<readonly Preemption[]> {
    return seedConsolePreemptions(this.#api, instanceOf(this.#table, handle), this.#table, this.#pins);
  }

  /** Stops a preempted cog. */
  async preempt(p: Preemption): Promise<void> {
    const id = checkPreemption(p);
    await this.#serial.run(() => seedCall(`stop ${id} for a console run`, () => this.#api.stop(id)));
  }

  /** Starts a preempted cog again. */
  async resume(p: Preemption): Promise<void> {
    const id = checkPreemption(p);
    await this.#serial.run(() => seedCall(`start ${id} after a console run`, () => this.#api.start(id)));
  }

  /** Runs one pinned console command (see `runSeedConsole`). */
  async console(handle: InstanceHandle, command: string): Promise<RunEvidence> {
    const e = instanceOf(this.#table, handle);
    return this.#serial.run(() => runSeedConsole(this.#api, e, command, this.#limits, this.#now));
  }
}
