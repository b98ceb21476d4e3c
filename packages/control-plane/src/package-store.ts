import type { RevocationCheck } from '@heddle/model';
import {
  type CogBody,
  type KindRegistry,
  PackageError,
  type TrustAnchors,
  VerifiedPackageStore,
  type VerifiedWorkload,
} from '@heddle/package';
import { PlaneError } from './errors.js';

/** Options of a {@link PackageStore}. */
export interface PackageStoreOptions {
  /** Where packages are kept, one directory per manifest hash. */
  readonly dir: string;
  /** The controller's trust anchors. */
  readonly anchors: TrustAnchors;
  /** The controller's revocations. */
  readonly revocations: RevocationCheck;
  /** Kinds accepted (default `@heddle/package`'s). */
  readonly kinds?: KindRegistry;
}

/**
 * The packages a controller places, by manifest hash under `<dir>/<hash>/`: `@heddle/package`'s
 * {@link VerifiedPackageStore} (the one the hosts use too), its errors told as the plane's. An
 * operator's package directory is verified against the controller's own anchors and revocations, then
 * copied in (verified again where it lands, synced, renamed into place), so an order can be placed
 * again later (a reschedule) without the operator's copy. Every use verifies the held copy again.
 */
export class PackageStore {
  readonly #store: VerifiedPackageStore;
  /** Per manifest hash: the verification running, and the one queued behind it. */
  readonly #gets = new Map<
    string,
    {
      running: Promise<VerifiedWorkload<CogBody>> | undefined;
      next: Promise<VerifiedWorkload<CogBody>> | undefined;
    }
  >();

  constructor(options: PackageStoreOptions) {
    this.#store = new VerifiedPackageStore({ ...options, kind: 'cog' });
  }

  /** Verifies the package in `dir` and holds a copy; returns the verified copy. `package_invalid` (field `package_dir`) when it does not verify. */
  add(dir: string): Promise<VerifiedWorkload<CogBody>> {
    return this.#store.add(dir).catch((err: unknown) => {
      throw planeError(err, dir, 'package_dir');
    });
  }

  /**
   * The held package with `manifestHash`, verified again; `package_invalid` (field `manifest_hash`)
   * when absent or no longer valid. Every call is answered by a verification that started after it
   * was made: calls made while one runs share the next one (so a thousand places of one package in
   * flight cost a few verifications, not a thousand).
   */
  get(manifestHash: string): Promise<VerifiedWorkload<CogBody>> {
    let entry = this.#gets.get(manifestHash);
    if (entry === undefined) {
      entry = { running: undefined, next: undefined };
      this.#gets.set(manifestHash, entry);
    }
    if (entry.next !== undefined) return entry.next;
    const q = entry;
    const after = q.running;
    const noop = (): void => undefined;
    const run: Promise<VerifiedWorkload<CogBody>> = (
      after === undefined ? Promise.resolve() : after.then(noop, noop)
    )
      .then(() => {
        // It starts now: it is the running one, and calls from now on queue behind it.
        q.running = run;
        if (q.next === run) q.next = undefined;
        return this.#store.get(manifestHash);
      })
      .catch((err: unknown) => {
        throw planeError(err, manifestHash, 'manifest_hash');
      })
      .finally(() => {
        if (q.running !== run) return;
        q.running = undefined;
        if (q.next === undefined) this.#gets.delete(manifestHash);
      });
    if (after === undefined) q.running = run;
    else q.next = run;
    return run;
  }

  /** Where the package with `manifestHash` is held; `package_invalid` when it is not a manifest hash. */
  pathOf(manifestHash: string): string {
    try {
      return this.#store.pathOf(manifestHash);
    } catch (err) {
      throw planeError(err, manifestHash, 'manifest_hash');
    }
  }
}

/** A store error as the plane's: `state` when the copy could not be made, else `package_invalid` led by the package code. */
function planeError(err: unknown, subject: string, field: string): PlaneError {
  if (!(err instanceof PackageError)) return new PlaneError('state', String(err), { cause: err });
  if (err.code === 'store_invalid') return new PlaneError('state', err.message, { cause: err });
  return new PlaneError('package_invalid', `${subject}: ${err.code}: ${err.message}`, { field, cause: err });
}
