import type { JsonValue } from '@heddle/envelope';
import { type InstanceHandle, RuntimeError, type RuntimeWorkload } from '@heddle/runtime';
import { admitFromStore } from './seed-admission.js';
import type { CogConfig, SeedApi } from './seed-api.js';
import {
  installPinned,
  type SeedReconcileOptions,
  SeedStrandedInstallError,
  undoInstall,
} from './seed-install.js';
import {
  assertUnderCap,
  pinnedOnSeed,
  runningCount,
  type SeedInstance,
  seedCall,
  seedFailure,
} from './seed-instance.js';
import type { SeedPin } from './seed-pins.js';

/** The most config values one load may set on the Seed. */
export const SEED_MAX_CONFIG_VALUES = 64;

/**
 * A load's config values as the Seed's config API takes them: a flat object of strings (at most 1 KiB),
 * finite numbers, booleans and nulls. Anything else is refused with `invalid_config` naming the field
 * (a Seed cog takes its settings from the config API, never from argv).
 */
export function cogConfigOf(values: Readonly<Record<string, JsonValue>>): CogConfig {
  const out: Record<string, string | number | boolean | null> = {};
  const keys = Object.keys(values);
  if (keys.length > SEED_MAX_CONFIG_VALUES) {
    throw new RuntimeError('invalid_config', `values: at most ${SEED_MAX_CONFIG_VALUES} config values`, {
      field: 'values',
    });
  }
  for (const k of keys) {
    const v = values[k];
    const field = `values.${k}`;
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(k)) {
      throw new RuntimeError('invalid_config', `${field}: a config key is 1-64 of [A-Za-z0-9_.-]`, { field });
    }
    const ok =
      v === null ||
      typeof v === 'boolean' ||
      (typeof v === 'number' && Number.isFinite(v)) ||
      (typeof v === 'string' && v.length <= 1024);
    if (!ok) {
      throw new RuntimeError(
        'invalid_config',
        `${field}: the Seed config API takes strings (<= 1024 chars), numbers, booleans or null`,
        { field },
      );
    }
    // cast: the value check above allows only these types
    out[k] = v as string | number | boolean | null;
  }
  return out;
}

/** What a load needs of the adapter. */
export interface SeedLoadContext {
  readonly api: SeedApi;
  readonly cap: number;
  readonly reconcile: SeedReconcileOptions;
  /** The instances the adapter holds (a stranded install is added here). */
  readonly table: Map<string, SeedInstance>;
}

/**
 * Loads `pin` as `handle` (without `storeInstalled`): uses the cog when the Seed already holds it at
 * the pinned version (another version is refused with `admission` and left alone); otherwise checks the
 * store (drift, sha256) and the cap (an install auto-starts), installs, stops it, checks the version
 * (undone when wrong). Config values go to the config API; a failure there undoes an install made here.
 * Returns the entry (not yet held by the table, except a stranded install, which is kept).
 */
export async function loadSeedInstance(
  ctx: SeedLoadContext,
  w: RuntimeWorkload,
  pin: SeedPin,
  handle: InstanceHandle,
  config: CogConfig,
): Promise<SeedInstance> {
  const { api } = ctx;
  const installed = await seedCall('list the installed cogs', () => api.installed());
  const present = installed.find((c) => c.id === pin.id);
  let h = handle;
  if (present !== undefined && present.version !== pin.version) {
    throw new RuntimeError(
      'admission',
      `${pin.id} is installed on the Seed at ${present.version}, but the operator pinned ${pin.version}; left as it is`,
      { field: 'workload.version' },
    );
  }
  if (present === undefined) {
    admitFromStore(pin, w, await seedCall('read the Seed store', () => api.available()));
    assertUnderCap(runningCount(installed), ctx.cap, `installing ${pin.id} auto-starts it`);
    h = { ...handle, storeInstalled: true };
    let outcome: 'installed' | 'already_installed';
    try {
      outcome = await installPinned(api, h, pin.version, ctx.reconcile);
    } catch (err) {
      if (err instanceof SeedStrandedInstallError) ctx.table.set(h.instanceId, entryOf(h, pin, true, true));
      throw err;
    }
    if (outcome === 'already_installed') {
      // Installed by someone else since the list was read: used as is, never uninstalled by unload.
      h = handle;
      pinnedOnSeed(
        await seedCall('read the installed cogs back', () => api.installed()),
        pin.id,
        pin.version,
      );
    }
  }
  if (Object.keys(config).length > 0) {
    try {
      await api.setConfig(pin.id, config);
    } catch (err) {
      const why = seedFailure(`set the config of ${pin.id}`, err);
      if (h.storeInstalled !== true) throw why;
      const undone = await undoInstall(api, h, why);
      if (undone instanceof SeedStrandedInstallError)
        ctx.table.set(h.instanceId, entryOf(h, pin, true, true));
      throw undone;
    }
  }
  return entryOf(h, pin, h.storeInstalled === true, false);
}

/** The adapter's entry of an instance of `pin`. */
export function entryOf(
  handle: InstanceHandle,
  pin: SeedPin,
  installedHere: boolean,
  stranded: boolean,
): SeedInstance {
  return {
    handle,
    cogId: pin.id,
    version: pin.version,
    installedHere,
    consoleCommands: [...pin.console_commands],
    stranded,
    startedAtMs: null,
  };
}
