import { randomBytes } from 'node:crypto';
import { cpSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { RevocationCheck } from '@heddle/model';
import {
  type CogBody,
  type KindRegistry,
  PackageError,
  type TrustAnchors,
  type VerifiedWorkload,
  verifyPackage,
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
 * The packages a controller places, by manifest hash under `<dir>/<hash>/`: an operator's package
 * directory is verified against the controller's own anchors and revocations, then copied in (to a
 * temporary directory renamed into place), so an order can be placed again later (a reschedule)
 * without the operator's copy. Every use verifies the held copy again.
 */
export class PackageStore {
  readonly #o: PackageStoreOptions;

  constructor(options: PackageStoreOptions) {
    this.#o = { ...options, dir: resolve(options.dir) };
    mkdirSync(this.#o.dir, { recursive: true, mode: 0o700 });
  }

  /** Verifies the package in `dir` and holds a copy; returns the verified copy. `package_invalid` when it does not verify. */
  async add(dir: string): Promise<VerifiedWorkload<CogBody>> {
    const original = await this.#verify(resolve(dir), 'package_dir');
    const final = this.pathOf(original.manifestHash);
    if (!isDirectory(final)) {
      // Copied aside, then renamed into place: a held package is always complete. The copy is
      // verified where it ends up (below), so what is served is what was checked.
      const tmp = join(this.#o.dir, `.incoming-${randomBytes(6).toString('hex')}`);
      try {
        cpSync(original.dir, tmp, { recursive: true, dereference: false, errorOnExist: true });
        if (!isDirectory(final)) renameSync(tmp, final);
      } catch (err) {
        throw new PlaneError(
          'state',
          `cannot keep a copy of ${dir}: ${err instanceof Error ? err.message : String(err)}`,
          {
            cause: err,
          },
        );
      } finally {
        rmSync(tmp, { recursive: true, force: true });
      }
    }
    try {
      return await this.get(original.manifestHash);
    } catch (err) {
      rmSync(final, { recursive: true, force: true }); // a held copy that does not verify is not kept
      throw err;
    }
  }

  /** The held package with `manifestHash`, verified again; `package_invalid` when absent or no longer valid. */
  get(manifestHash: string): Promise<VerifiedWorkload<CogBody>> {
    if (!/^[0-9a-f]{64}$/.test(manifestHash) || !isDirectory(this.pathOf(manifestHash))) {
      return Promise.reject(
        new PlaneError('package_invalid', `no package ${manifestHash} is held by this controller`, {
          field: 'manifest_hash',
        }),
      );
    }
    return this.#verify(this.pathOf(manifestHash), 'manifest_hash');
  }

  /** Where the package with `manifestHash` is held. */
  pathOf(manifestHash: string): string {
    return join(this.#o.dir, manifestHash);
  }

  async #verify(dir: string, field: string): Promise<VerifiedWorkload<CogBody>> {
    try {
      const v = await verifyPackage<CogBody>(dir, {
        anchors: this.#o.anchors,
        revocations: this.#o.revocations,
        ...(this.#o.kinds === undefined ? {} : { kinds: this.#o.kinds }),
      });
      if (v.kind !== 'cog')
        throw new PackageError('manifest-invalid', `kind ${v.kind}: only cog packages are placed`);
      return v;
    } catch (err) {
      const code = err instanceof PackageError ? `${err.code}: ` : '';
      throw new PlaneError(
        'package_invalid',
        `${dir}: ${code}${err instanceof Error ? err.message : String(err)}`,
        {
          field,
          cause: err,
        },
      );
    }
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
