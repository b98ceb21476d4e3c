import { type InstanceHandle, RuntimeError } from '@heddle/runtime';
import { SeedError, type SeedErrorCode } from './errors.js';
import type { InstalledCog, SeedApi } from './seed-api.js';
import { pinnedOnSeed, seedCall, seedFailure } from './seed-instance.js';

/**
 * A load whose install the adapter could not undo: the cog is on the Seed although the load failed
 * (code `runtime`, message starting `stranded install:`). The adapter keeps the instance, unloadable
 * only: `handle` is what to adopt (the adapter accepts it as it is) and unload to remove the cog.
 */
export class SeedStrandedInstallError extends RuntimeError {
  /** The kept instance. */
  readonly handle: InstanceHandle;

  /** A stranded install of `handle`'s cog; `message` says why and how to remove it. */
  constructor(handle: InstanceHandle, message: string) {
    super('runtime', message, { field: 'instanceId' });
    this.handle = handle;
  }
}

/** How a slow or failed install is reconciled: the installed list read back this often, this far apart. */
export interface SeedReconcileOptions {
  /** Reads of the installed list (default 5). */
  readonly attempts: number;
  /** Milliseconds between reads (default 1000). */
  readonly pollMs: number;
}

/** The default {@link SeedReconcileOptions}. */
export const SEED_RECONCILE: SeedReconcileOptions = { attempts: 5, pollMs: 1000 };

/**
 * An install whose outcome could not be established: no clear answer, and the installed list (when it
 * could be read) does not show the cog yet. The Seed may still be installing it, so a caller must not
 * place the cog elsewhere as if nothing happened (code `runtime`).
 */
export class SeedInstallUnsureError extends RuntimeError {
  constructor(message: string) {
    super('runtime', message);
  }
}

/** Failures after which an install may or may not have happened: the Seed is asked. */
const UNSURE: ReadonlySet<SeedErrorCode> = new Set<SeedErrorCode>(['timeout', 'unreachable', 'bad_answer']);

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Installs store cog `id`. An install without a clear answer (timeout, connection lost, garbage) is
 * reconciled by reading the installed list back until it lists `id` (then the install happened) or
 * the reads run out ({@link SeedInstallUnsureError}: it may still be installing). An `{error}`
 * refusal is passed on.
 */
export async function installReconciled(
  api: SeedApi,
  id: string,
  opts: SeedReconcileOptions,
): Promise<'installed' | 'already_installed'> {
  try {
    return await api.install(id);
  } catch (err) {
    if (!(err instanceof SeedError) || !UNSURE.has(err.code)) throw seedFailure(`install ${id}`, err);
    for (let i = 0; i < opts.attempts; i++) {
      if (i > 0) await sleep(opts.pollMs);
      const list: readonly InstalledCog[] | undefined = await api.installed().catch(() => undefined);
      if (list?.some((c) => c.id === id)) return 'installed';
    }
    throw new SeedInstallUnsureError(
      `install ${id}: no clear answer (${err.code}) and the Seed does not list it after ${opts.attempts} reads; it may still be installing it (check the installed list before placing it elsewhere)`,
    );
  }
}

/**
 * The install path of a load: install (reconciled), stop the auto-started cog (start is explicit),
 * read the Seed back, and undo (stop, uninstall) anything that is not the pinned version. Resolves
 * `already_installed` (and does nothing else) when the Seed says the cog was installed before: someone
 * else installed it meanwhile, so it is not this adapter's to stop or uninstall. A refusal
 * after the install was undone keeps its code (`admission` for a wrong version); an install that could
 * not be undone rejects with {@link SeedStrandedInstallError}.
 */
export async function installPinned(
  api: SeedApi,
  handle: InstanceHandle,
  version: string,
  opts: SeedReconcileOptions,
): Promise<'installed' | 'already_installed'> {
  const id = handle.workloadId;
  if ((await installReconciled(api, id, opts)) === 'already_installed') return 'already_installed';
  try {
    await seedCall(`stop ${id} after its install`, () => api.stop(id));
    const after = await seedCall('read the installed cogs back', () => api.installed());
    pinnedOnSeed(after, id, version);
  } catch (err) {
    throw await undoInstall(api, handle, seedFailure(`install ${id}`, err));
  }
  return 'installed';
}

/**
 * Undoes an install (stop, then uninstall) after `why`, and returns the error to throw: `why` with
 * "the install was undone" when the Seed no longer lists the cog, else a {@link SeedStrandedInstallError}.
 */
export async function undoInstall(
  api: SeedApi,
  handle: InstanceHandle,
  why: RuntimeError,
): Promise<RuntimeError> {
  const id = handle.workloadId;
  await api.stop(id).catch(() => undefined);
  let undoError: string | undefined;
  try {
    await api.uninstall(id);
  } catch (err) {
    undoError = seedFailure(`uninstall ${id}`, err).message;
  }
  const list = await api.installed().catch(() => undefined);
  if (list !== undefined && !list.some((c) => c.id === id)) {
    return new RuntimeError(why.code, `${why.message}; the install was undone`, {
      ...(why.field === undefined ? {} : { field: why.field }),
    });
  }
  const detail =
    undoError ?? (list === undefined ? 'the Seed could not be read back' : 'the Seed still lists it');
  return new SeedStrandedInstallError(
    handle,
    `stranded install: ${id} was installed on the Seed but ${why.message}; undoing it failed (${detail}). ` +
      `Instance ${handle.instanceId} is kept only to be unloaded, which removes the cog`,
  );
}
