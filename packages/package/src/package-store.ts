import { randomBytes } from 'node:crypto';
import { cpSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fsyncDir } from '@heddle/envelope';
import type { RevocationCheck } from '@heddle/model';
import type { CogBody } from './cog.js';
import { PackageError } from './errors.js';
import { type HashedContentCache, sharedHashCache } from './hash-cache.js';
import type { KindRegistry } from './kind-registry.js';
import type { ParsedPackage } from './manifest.js';
import { readEnvelope } from './manifest.js';
import { DEFAULT_PIECE_SIZE } from './pieces.js';
import { fsyncTree } from './sync-tree.js';
import type { TrustAnchors } from './trust.js';
import { checkSignatures, type VerifiedWorkload, verifyPackage } from './verify.js';

/**
 * A fetch's result when it checked every byte it wrote against the envelope it wrote (as
 * `@heddle/wire`'s `fetchPackage` does): the store then checks signatures, revocations, paths, types
 * and sizes but does not hash the files again.
 */
export interface FetchedPackage {
  /** Where the package was written (the `destDir` given). */
  readonly dir: string;
  /** True: every file's size and BLAKE3 were checked against the envelope as it was written. */
  readonly contentVerified: true;
}

/**
 * Fetches the package with a manifest hash into the fresh directory `destDir` and returns its path
 * (its files are then hashed by the store), or a {@link FetchedPackage} (they are not).
 */
export type PackageFetcher = (manifestHash: string, destDir: string) => Promise<string | FetchedPackage>;

/** Options of a {@link VerifiedPackageStore}. */
export interface VerifiedPackageStoreOptions {
  /** Where packages are kept, one directory per manifest hash (created owner-only). */
  readonly dir: string;
  /** The trust anchors every held package is verified against, at every use. */
  readonly anchors: TrustAnchors;
  /** The revocations (checked at every verification, held package or not). */
  readonly revocations: RevocationCheck;
  /** The kinds accepted (default `@heddle/package`'s). */
  readonly kinds?: KindRegistry;
  /** The only kind held (default `cog`): a package of another kind is refused with `manifest_invalid`. */
  readonly kind?: string;
  /**
   * Hashes of held files (default {@link sharedHashCache}): a held file whose stamp is unchanged since
   * it was hashed is not hashed again, and the piece maps computed when it was are served from it.
   */
  readonly hashCache?: HashedContentCache;
  /** Piece size of the piece maps computed (and kept) when a file is hashed (default 256 KiB). */
  readonly pieceSize?: number;
}

/** A verified package and how it was obtained. */
export interface ObtainedPackage {
  readonly verified: VerifiedWorkload<CogBody>;
  /** Milliseconds of the fetch, or null when the package was already held. */
  readonly fetched: { readonly ms: number } | null;
}

const MANIFEST_HASH = /^[0-9a-f]{64}$/;
const INCOMING = '.incoming-';

/**
 * Verified workload packages kept by manifest hash under `<dir>/<manifest hash>/`: the one store of
 * the controller (packages an operator adds, {@link VerifiedPackageStore.add}) and of a host (packages
 * fetched from a controller, {@link VerifiedPackageStore.obtain}).
 *
 * - A package enters through `<dir>/.incoming-<random>/`: copied or fetched there, verified there
 *   (anchors, kinds, revocations, the manifest hash asked for, the kind), every file and directory
 *   fsynced, then renamed into place and the store directory fsynced. A held package was therefore
 *   verified at least once, and a failed or interrupted entry leaves nothing in place; incoming
 *   directories left by a crash are removed at construction.
 * - A held package is verified again at every use ({@link VerifiedPackageStore.get}): trust and
 *   revocations may have changed since; each file is checked (path, type, size) and hashed again when
 *   its stamp (device, inode, size, mtime, ctime: see `FileStamp`) differs from the one it had when
 *   it was last hashed, so a change through the file system is caught while an unchanged file is
 *   hashed once (when added, with its piece maps computed in the same pass and kept in the
 *   `hashCache` for serving). The directory must hold the package its name says (`manifest_invalid`
 *   otherwise).
 * - A fetched package whose fetch checked every byte ({@link FetchedPackage}) is not hashed again.
 * - A manifest hash is 64 lower-case hex characters; anything else is refused (`manifest_invalid`,
 *   field `manifest_hash`) before any path is built from it.
 */
export class VerifiedPackageStore {
  readonly #o: VerifiedPackageStoreOptions & {
    readonly kind: string;
    readonly hashCache: HashedContentCache;
    readonly pieceSize: number;
  };

  constructor(options: VerifiedPackageStoreOptions) {
    this.#o = {
      ...options,
      dir: resolve(options.dir),
      kind: options.kind ?? 'cog',
      hashCache: options.hashCache ?? sharedHashCache,
      pieceSize: options.pieceSize ?? DEFAULT_PIECE_SIZE,
    };
    const dir = this.#o.dir;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    for (const name of readdirSync(dir)) {
      if (name.startsWith(INCOMING)) rmSync(join(dir, name), { recursive: true, force: true });
    }
  }

  /** The store directory (absolute). */
  get dir(): string {
    return this.#o.dir;
  }

  /**
   * The directory of the package with `manifestHash`, whether or not it is held. Throws
   * `manifest_invalid` (field `manifest_hash`) when `manifestHash` is not 64 lower-case hex characters.
   */
  pathOf(manifestHash: string): string {
    if (!MANIFEST_HASH.test(manifestHash)) {
      throw new PackageError(
        'manifest_invalid',
        `manifest_hash: expected 64 lower-case hex characters, got ${JSON.stringify(manifestHash.slice(0, 80))}`,
        { field: 'manifest_hash' },
      );
    }
    return join(this.#o.dir, manifestHash);
  }

  /** True when a package is held under `manifestHash` (not verified: {@link get} verifies). */
  has(manifestHash: string): boolean {
    return MANIFEST_HASH.test(manifestHash) && isDirectory(join(this.#o.dir, manifestHash));
  }

  /**
   * The held package with `manifestHash`, verified again. Throws `package_missing` (field
   * `manifest_hash`) when none is held, else the `PackageError` of verification.
   */
  async get(manifestHash: string): Promise<VerifiedWorkload<CogBody>> {
    const final = this.pathOf(manifestHash);
    if (!isDirectory(final)) {
      throw new PackageError('package_missing', `no package ${manifestHash} is held in ${this.#o.dir}`, {
        field: 'manifest_hash',
      });
    }
    return this.#verify(final, manifestHash);
  }

  /**
   * Verifies the package in `dir` and holds a copy (copied to an incoming directory, verified there,
   * synced, renamed into place); returns the held copy, verified. When the package is already held,
   * the held copy is verified and returned; a held copy that no longer verifies is removed and its
   * error thrown (the next `add` holds a fresh copy). Throws the `PackageError` of verification.
   */
  async add(dir: string): Promise<VerifiedWorkload<CogBody>> {
    // The envelope names the package; its files are hashed once, in the copy that is kept.
    const { kinds } = this.#o;
    const hash = readEnvelope(resolve(dir), kinds === undefined ? {} : { kinds }).manifestHash;
    const final = this.pathOf(hash);
    if (isDirectory(final)) {
      try {
        return await this.#verify(final, hash);
      } catch (err) {
        this.remove(hash);
        throw err;
      }
    }
    const incoming = this.#incoming(hash);
    try {
      try {
        cpSync(resolve(dir), incoming, { recursive: true, dereference: false, errorOnExist: true });
      } catch (err) {
        throw new PackageError('store_invalid', `cannot copy ${dir} into ${this.#o.dir}: ${message(err)}`, {
          field: 'dir',
          cause: err,
        });
      }
      return await this.#enter(incoming, hash);
    } finally {
      rmSync(incoming, { recursive: true, force: true });
    }
  }

  /**
   * The verified package with `manifestHash`: the held one when there is one, else fetched with
   * `fetch` into an incoming directory, verified there and renamed into place. Throws the fetch's
   * error, or the `PackageError` of verification (`manifest_invalid`, field `destDir`, when the fetch
   * wrote somewhere else); nothing unverified is kept.
   */
  async obtain(manifestHash: string, fetch: PackageFetcher): Promise<ObtainedPackage> {
    const final = this.pathOf(manifestHash);
    if (isDirectory(final)) return { verified: await this.#verify(final, manifestHash), fetched: null };
    const incoming = this.#incoming(manifestHash);
    const t0 = performance.now();
    try {
      const got = await fetch(manifestHash, incoming);
      const ms = performance.now() - t0;
      const dir = typeof got === 'string' ? got : got.dir;
      if (resolve(dir) !== incoming) {
        throw new PackageError('manifest_invalid', `the fetch wrote to ${dir}, not to ${incoming}`, {
          field: 'destDir',
        });
      }
      const contentVerified = typeof got !== 'string' && got.contentVerified === true;
      return { verified: await this.#enter(incoming, manifestHash, contentVerified), fetched: { ms } };
    } finally {
      rmSync(incoming, { recursive: true, force: true });
    }
  }

  /**
   * Steps 2 to 5 of `verifyPackage` on an envelope alone (signatures against the anchors and
   * threshold, then revocations), for a fetch to call before it transfers any file: a package this
   * store would refuse costs no transfer. Throws `PackageError` as `verifyPackage` would.
   */
  checkEnvelope(pkg: ParsedPackage): void {
    const signerKeys = checkSignatures(pkg, this.#o.anchors);
    const artifactHashes = [...new Set(pkg.files.map((f) => f.blake3))].sort();
    const revoked = this.#o.revocations.firstRevoked({
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

  /**
   * Removes the held package with `manifestHash` (nothing uses it any more); no-op when none is held
   * or `manifestHash` is not a manifest hash (nothing can be held under such a name).
   */
  remove(manifestHash: string): void {
    if (!MANIFEST_HASH.test(manifestHash)) return;
    this.#o.hashCache.forgetUnder(join(this.#o.dir, manifestHash));
    rmSync(join(this.#o.dir, manifestHash), { recursive: true, force: true });
  }

  #incoming(manifestHash: string): string {
    return join(this.#o.dir, `${INCOMING}${manifestHash}-${randomBytes(6).toString('hex')}`);
  }

  /** Verifies `incoming`, syncs it and renames it into place (or uses the copy another entry put there first). */
  async #enter(
    incoming: string,
    manifestHash: string,
    contentVerified = false,
  ): Promise<VerifiedWorkload<CogBody>> {
    const verified = await this.#verify(incoming, manifestHash, contentVerified);
    const final = this.pathOf(manifestHash);
    if (isDirectory(final)) {
      this.#o.hashCache.forgetUnder(incoming);
      return this.#verify(final, manifestHash);
    }
    fsyncTree(incoming);
    renameSync(incoming, final);
    fsyncDir(this.#o.dir);
    // The files keep their inodes and stamps across the rename: what was hashed (or checked by the
    // fetch) in the incoming directory is remembered under the held path.
    this.#o.hashCache.moveUnder(incoming, final);
    return moved(verified, final);
  }

  async #verify(
    dir: string,
    manifestHash?: string,
    contentVerified = false,
  ): Promise<VerifiedWorkload<CogBody>> {
    const { anchors, revocations, kinds, kind, hashCache, pieceSize } = this.#o;
    const verified = await verifyPackage<CogBody>(dir, {
      anchors,
      revocations,
      ...(kinds === undefined ? {} : { kinds }),
      hashCache,
      cachePieceSize: pieceSize,
      ...(contentVerified ? { contentVerified: true } : {}),
    });
    if (verified.kind !== kind) {
      throw new PackageError('manifest_invalid', `kind ${verified.kind}: only ${kind} packages are held`, {
        field: 'kind',
      });
    }
    if (manifestHash !== undefined && verified.manifestHash !== manifestHash) {
      throw new PackageError(
        'manifest_invalid',
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

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));
