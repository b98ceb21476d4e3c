import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { RevocationCheck } from '@heddle/model';
import {
  type CogBody,
  checkSignatures,
  type KindRegistry,
  PackageError,
  type ParsedPackage,
  type TrustAnchors,
  type VerifiedWorkload,
  verifyPackage,
} from '@heddle/package';

/** Fetches the package with a manifest hash into a fresh directory and returns its path. */
export type PackageFetcher = (manifestHash: string, destDir: string) => Promise<string>;

/** Options of a {@link PackageCache}. */
export interface PackageCacheOptions {
  /** Where verified packages are kept, one directory per manifest hash. */
  readonly dir: string;
  /** This node's own trust anchors. */
  readonly anchors: TrustAnchors;
  /** This node's revocations (checked at every verification, cached package or not). */
  readonly revocations: RevocationCheck;
  /** The kinds this node accepts (default `@heddle/package`'s). */
  readonly kinds?: KindRegistry;
}

/** A verified package and how it was obtained. */
export interface ObtainedPackage {
  readonly verified: VerifiedWorkload<CogBody>;
  /** Bytes and milliseconds of the fetch, or null when the package was already held. */
  readonly fetched: { readonly ms: number } | null;
}

/**
 * The packages a host holds, by manifest hash, under `<dir>/<manifest hash>/`. A package is fetched
 * into `<dir>/.incoming-<hash>-<random>/`, verified there against this node's anchors, kinds and
 * revocations, and only then renamed into place, so a held package was verified at least once and a
 * failed or interrupted fetch leaves nothing behind (stale incoming directories are removed at
 * construction). A held package is verified again before every use: trust and revocations may have
 * changed since, and the files are read again (a change on disk is caught).
 */
export class PackageCache {
  readonly #options: PackageCacheOptions;

  constructor(options: PackageCacheOptions) {
    this.#options = { ...options, dir: resolve(options.dir) };
    const dir = this.#options.dir;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    for (const name of readdirSync(dir)) {
      if (name.startsWith('.incoming-')) rmSync(join(dir, name), { recursive: true, force: true });
    }
  }

  /** The directory of the package with `manifestHash` (whether or not it is held). */
  pathOf(manifestHash: string): string {
    return join(this.#options.dir, manifestHash);
  }

  /**
   * The verified package with `manifestHash`: the held one when there is one, else fetched with
   * `fetch`. Throws the fetch's error (a `WireError`), or `PackageError` from verification; nothing
   * unverified is kept.
   */
  async obtain(manifestHash: string, fetch: PackageFetcher): Promise<ObtainedPackage> {
    const final = this.pathOf(manifestHash);
    if (isDirectory(final)) return { verified: await this.#verify(final, manifestHash), fetched: null };
    const incoming = join(this.#options.dir, `.incoming-${manifestHash}-${randomBytes(6).toString('hex')}`);
    const t0 = performance.now();
    try {
      const dir = await fetch(manifestHash, incoming);
      const ms = performance.now() - t0;
      if (resolve(dir) !== incoming) {
        throw new PackageError('manifest-invalid', `the fetch wrote to ${dir}, not to ${incoming}`, {
          field: 'destDir',
        });
      }
      const verified = await this.#verify(incoming, manifestHash);
      if (isDirectory(final)) {
        rmSync(incoming, { recursive: true, force: true });
        return { verified: await this.#verify(final, manifestHash), fetched: { ms } };
      }
      renameSync(incoming, final);
      return { verified: moved(verified, final), fetched: { ms } };
    } catch (err) {
      rmSync(incoming, { recursive: true, force: true });
      throw err;
    }
  }

  /**
   * Steps 2 to 5 of `verifyPackage` on an envelope alone (signatures against this node's anchors and
   * threshold, then revocations), for a fetch to call before it transfers any file: a package this
   * node would refuse costs no transfer. Throws `PackageError` as `verifyPackage` would.
   */
  checkEnvelope(pkg: ParsedPackage): void {
    const signerKeys = checkSignatures(pkg, this.#options.anchors);
    const artifactHashes = [...new Set(pkg.files.map((f) => f.blake3))].sort();
    const revoked = this.#options.revocations.firstRevoked({
      packageId: pkg.packageId,
      signerKeys,
      artifactHashes,
    });
    if (revoked !== undefined) {
      const why = revoked.reason === undefined ? '' : ` (${revoked.reason})`;
      throw new PackageError('revoked', `revoked: ${revoked.kind} ${revoked.ref}${why}`, {
        field: revoked.kind,
      });
    }
  }

  /** Removes the held package with `manifestHash` (no instance uses it any more). */
  remove(manifestHash: string): void {
    rmSync(this.pathOf(manifestHash), { recursive: true, force: true });
  }

  async #verify(dir: string, manifestHash: string): Promise<VerifiedWorkload<CogBody>> {
    const { anchors, revocations, kinds } = this.#options;
    const verified = await verifyPackage<CogBody>(dir, {
      anchors,
      revocations,
      ...(kinds === undefined ? {} : { kinds }),
    });
    if (verified.manifestHash !== manifestHash) {
      throw new PackageError(
        'manifest-invalid',
        `the package held for ${manifestHash} has another manifest`,
        {
          field: 'manifest_hash',
        },
      );
    }
    return verified;
  }
}

/** `verified` after its directory was renamed to `dir` (same files, same inodes). */
function moved(verified: VerifiedWorkload<CogBody>, dir: string): VerifiedWorkload<CogBody> {
  return {
    ...verified,
    dir,
    files: verified.files.map((f) => ({ ...f, absolutePath: join(dir, f.path) })),
  };
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
