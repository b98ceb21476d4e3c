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

  constructor(options: PackageStoreOptions) {
    this.#store = new VerifiedPackageStore({ ...options, kind: 'cog' });
  }

  /** Verifies the package in `dir` and holds a copy; returns the verified copy. `package_invalid` (field `package_dir`) when it does not verify. */
  add(dir: string): Promise<VerifiedWorkload<CogBody>> {
    return this.#store.add(dir).catch((err: unknown) => {
      throw planeError(err, dir, 'package_dir');
    });
  }

  /** The held package with `manifestHash`, verified again; `package_invalid` (field `manifest_hash`) when absent or no longer valid. */
  get(manifestHash: string): Promise<VerifiedWorkload<CogBody>> {
    return this.#store.get(manifestHash).catch((err: unknown) => {
      throw planeError(err, manifestHash, 'manifest_hash');
    });
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
