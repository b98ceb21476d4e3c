import type { InstanceHandle } from '@heddle/runtime';
import { RuntimeError } from '@heddle/runtime';
import { SeedError, type SeedErrorCode } from './errors.js';
import type { InstalledCog } from './seed-api.js';

/** An instance the Seed adapter holds: one store cog on the Seed, at its pinned version. */
export interface SeedInstance {
  readonly handle: InstanceHandle;
  /** The store cog id. */
  readonly cogId: string;
  /** The operator-pinned version: nothing else may run as this instance. */
  readonly version: string;
  /** True when this adapter installed the cog (so unload uninstalls it). */
  readonly installedHere: boolean;
  /** The pinned console commands. */
  readonly consoleCommands: readonly string[];
  /** True for an install the adapter could not undo: the instance can only be unloaded. */
  readonly stranded: boolean;
  /** When the adapter last started it (Unix ms), for evidence. */
  startedAtMs: number | null;
}

/** An instance's entry; `unknown_instance` (field `instanceId`) when the adapter does not hold it. */
export function instanceOf(table: ReadonlyMap<string, SeedInstance>, handle: InstanceHandle): SeedInstance {
  const e = table.get(handle.instanceId);
  if (e === undefined) {
    throw new RuntimeError(
      'unknown_instance',
      `instanceId: ${handle.instanceId} is not loaded on this Seed`,
      {
        field: 'instanceId',
      },
    );
  }
  return e;
}

/** Refuses (`runtime`) any transition but unload of a stranded install. */
export function assertNotStranded(e: SeedInstance, action: string): void {
  if (!e.stranded) return;
  throw new RuntimeError(
    'runtime',
    `stranded install: ${e.cogId} is on the Seed at a version the operator did not pin; ${action} refused, unload ${e.handle.instanceId} to remove it`,
    { field: 'instanceId' },
  );
}

/**
 * A Seed API failure inside the adapter (code `runtime`), with the client's code kept as `seedCode`
 * (`not_paired`, `unreachable`, ...) so that a caller reports one cause with one code: a token the
 * Seed refuses is `not_paired` whether a read or a governed transition met it.
 */
export class SeedApiFailure extends RuntimeError {
  /** The `SeedError` code of the failed call. */
  readonly seedCode: SeedErrorCode;

  constructor(seedCode: SeedErrorCode, message: string) {
    super('runtime', message);
    this.seedCode = seedCode;
  }
}

/**
 * A Seed API failure as a {@link SeedApiFailure} (code `runtime`, `seedCode` the client's): the
 * operation and the Seed error's code and message (token-free by the client's contract). Nothing else
 * of the failure (no cause chain, no request) is carried, so nothing of the request can leak into the
 * chain or evidence.
 */
export function seedFailure(operation: string, err: unknown): RuntimeError {
  if (err instanceof RuntimeError) return err;
  if (err instanceof SeedError) {
    const hint = err.code === 'not_paired' ? ' (pair again: the Seed refused the token)' : '';
    return new SeedApiFailure(
      err.code,
      `${operation}: the Seed API failed (${err.code}): ${err.message}${hint}`,
    );
  }
  return new RuntimeError(
    'runtime',
    `${operation}: the Seed API failed (${err instanceof Error ? err.name : 'error'})`,
  );
}

/** Calls the Seed API; a failure becomes {@link seedFailure}. */
export async function seedCall<T>(operation: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw seedFailure(operation, err);
  }
}

/**
 * Refuses unless the Seed holds `id` at exactly `version`: `runtime` when it is not installed,
 * `admission` when another version is.
 */
export function pinnedOnSeed(installed: readonly InstalledCog[], id: string, version: string): InstalledCog {
  const c = installed.find((x) => x.id === id);
  if (c === undefined) {
    throw new RuntimeError('runtime', `${id} is not installed on the Seed`, { field: 'workload.id' });
  }
  if (c.version !== version) {
    throw new RuntimeError(
      'admission',
      `${id} is installed on the Seed at ${c.version}, but the operator pinned ${version}`,
      { field: 'workload.version' },
    );
  }
  return c;
}

/** How many cogs run on the Seed now. */
export function runningCount(installed: readonly InstalledCog[]): number {
  return installed.filter((c) => c.running).length;
}

/** Refuses (`admission`) when `running` cogs already fill the concurrency cap; `why` says what would start. */
export function assertUnderCap(running: number, cap: number, why: string): void {
  if (running < cap) return;
  throw new RuntimeError(
    'admission',
    `${why}, but the Seed concurrency cap ${cap} is reached (${running} running)`,
    { field: 'concurrency_cap' },
  );
}

/**
 * Runs the Seed adapter's changing calls one at a time, in call order: a check of the Seed (the cap,
 * the installed list) and the change it allows are not interleaved with another call's.
 */
export class SeedSerial {
  #tail: Promise<unknown> = Promise.resolve();

  /** Runs `fn` after every call queued before it has settled; resolves or rejects as `fn` does. */
  run<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.#tail.then(fn, fn);
    this.#tail = next.catch(() => undefined);
    return next;
  }
}
