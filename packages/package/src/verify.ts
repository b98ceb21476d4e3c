import { realpathSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { DomainTag, errorMessage, fromHex, verifyWithDomain } from '@heddle/envelope';
import type { RevocationCheck, RevocationRefs } from '@heddle/model';
import { PackageError } from './errors.js';
import { type FileDigest, hashHandle, openPackageFile } from './file-hash.js';
import type { PackageFile } from './format.js';
import { type HashedContentCache, pieceMapOfHandle, stampOf } from './hash-cache.js';
import { type ParsedPackage, type ReadEnvelopeOptions, readEnvelope } from './manifest.js';
import { inspectPackagePath } from './paths.js';
import type { TrustAnchors } from './trust.js';

/** A file of a verified package. */
export interface VerifiedFile extends PackageFile {
  /** Absolute path of the verified file inside the package directory. */
  readonly absolutePath: string;
}

/** The result of a successful verification: what a runtime may load. */
export interface VerifiedWorkload<B = unknown> {
  /** The package directory (absolute). */
  readonly dir: string;
  /** The kind, such as `cog`. */
  readonly kind: string;
  /** The typed body. */
  readonly body: B;
  /** BLAKE3 of the statement, hex. */
  readonly packageId: string;
  /** BLAKE3 of `heddle-package.json`, hex. */
  readonly manifestHash: string;
  /** Public keys (hex, sorted) of the pinned keys whose signatures verified. */
  readonly signerKeys: readonly string[];
  /** Ids of the trust anchors of those keys, in the same order. */
  readonly signerIds: readonly string[];
  /** The files, hashed and found intact. */
  readonly files: readonly VerifiedFile[];
  /** BLAKE3 hashes (hex, sorted, unique) of the files. */
  readonly artifactHashes: readonly string[];
  /** The revocation references: package id, signer keys, artifact hashes. */
  readonly refs: RevocationRefs;
}

/** Options of {@link verifyPackage}. */
export interface VerifyOptions extends ReadEnvelopeOptions {
  /** The trust anchors (pinned keys and threshold). */
  readonly anchors: TrustAnchors;
  /**
   * The revocation list (a `RevocationList`, normally from `RevocationList.loadOrFailClosed`, or any
   * {@link RevocationCheck}). Required, so that forgetting it cannot mean "nothing is revoked": a
   * caller that deliberately has no list says so with `NO_REVOCATIONS` (or
   * `RevocationList.empty()`).
   */
  readonly revocations: RevocationCheck;
  /**
   * Reuse and record file hashes: a file whose {@link FileStamp} (device, inode, size, mtime, ctime) is
   * the one it had when this cache last saw it hashed to the listed BLAKE3 is not read again; a file
   * that is hashed is recorded. Without it every file is hashed.
   */
  readonly hashCache?: HashedContentCache;
  /**
   * With `hashCache`: a file that has to be hashed has its piece map at this piece size computed in the
   * same read pass (content hash and piece hashes) and kept in the cache, for serving it later.
   */
  readonly cachePieceSize?: number;
  /**
   * The caller already checked every byte of every file against the listed BLAKE3 (a fetch that
   * verified each file as it wrote it, into a directory only it wrote): files are checked for path,
   * type, identity and size as usual but not hashed (and recorded in `hashCache` when given).
   */
  readonly contentVerified?: boolean;
}

/**
 * Verifies a package directory against trust anchors, in this order (the first failure is thrown as
 * `PackageError` with its code):
 *
 * 1. `manifest_invalid`: the envelope is missing, larger than 1 MiB, not strict canonical JSON, of the
 *    wrong shape or kind, or lists a bad path (traversal, absolute, duplicate) or a size over the limits.
 * 2. `missing_signature`: the envelope carries no signature.
 * 3. `bad_signature`: a signature by a pinned key does not verify (fatal even if others do).
 *    Signatures by keys that are not pinned are ignored.
 * 4. `untrusted_signer`: fewer valid pinned signatures than the threshold (at least one).
 * 5. `revoked`: the package id, a signer key or an artifact hash is revoked (or the list failed closed).
 * 6. `file_missing`: a listed file is absent.
 * 7. `file_tampered`: a listed file is a symbolic link or not a regular file, is reached through a
 *    symbolic link, changed between its check and its read (another inode, or now outside the
 *    package), or its size or BLAKE3 differs. Files are hashed only here, after the signatures passed.
 */
export async function verifyPackage<B = unknown>(
  dir: string,
  options: VerifyOptions,
): Promise<VerifiedWorkload<B>> {
  const root = resolve(dir);
  const pkg = readEnvelope(root, options);
  const signerKeys = checkSignatures(pkg, options.anchors);
  const artifactHashes = [...new Set(pkg.files.map((f) => f.blake3))].sort();
  const refs: RevocationRefs = { packageId: pkg.packageId, signerKeys, artifactHashes };
  // Required by the type; a JavaScript caller that leaves it out still gets nothing treated as revoked,
  // as before, until every caller passes one (then this becomes a refusal).
  const revoked = options.revocations?.firstRevoked(refs);
  if (revoked) {
    const why = revoked.reason === undefined ? '' : ` (${revoked.reason})`;
    throw new PackageError('revoked', `revoked: ${revoked.kind} ${revoked.ref}${why}`, {
      field: revoked.kind,
    });
  }
  const files: VerifiedFile[] = [];
  if (pkg.files.length > 0) {
    const realRoot = realpathSync(root);
    for (let i = 0; i < pkg.files.length; i++) {
      // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
      files.push(await checkFile(root, realRoot, pkg.files[i] as PackageFile, i, options));
    }
  }
  return {
    dir: root,
    kind: pkg.envelope.kind,
    // cast: the kind registry validated the body with the kind's schema; B is the caller's name for it
    body: pkg.body as B,
    packageId: pkg.packageId,
    manifestHash: pkg.manifestHash,
    signerKeys,
    signerIds: signerKeys.map((k) => options.anchors.get(k)?.id ?? k),
    files,
    artifactHashes,
    refs,
  };
}

/**
 * Checks the signatures of a parsed envelope against the anchors (steps 2 to 4 of
 * {@link verifyPackage}) and returns the valid pinned signer keys, sorted.
 */
export function checkSignatures(pkg: ParsedPackage, anchors: TrustAnchors): string[] {
  const sigs = pkg.envelope.signatures;
  if (sigs.length === 0) {
    throw new PackageError('missing_signature', 'signatures: the package is not signed', {
      field: 'signatures',
    });
  }
  const valid: string[] = [];
  sigs.forEach((s, i) => {
    if (!anchors.isPinned(s.public_key)) return;
    const ok = verifyWithDomain(
      DomainTag.packageStatement,
      fromHex(s.public_key, 32),
      pkg.statement,
      fromHex(s.signature, 64),
    );
    if (!ok) {
      const id = anchors.get(s.public_key)?.id ?? s.public_key;
      throw new PackageError('bad_signature', `signatures[${i}]: invalid signature by pinned key ${id}`, {
        field: `signatures[${i}]`,
      });
    }
    valid.push(s.public_key);
  });
  if (valid.length === 0) {
    throw new PackageError('untrusted_signer', 'signatures: no signature by a pinned key', {
      field: 'signatures',
    });
  }
  if (valid.length < anchors.threshold) {
    throw new PackageError(
      'untrusted_signer',
      `signatures: ${valid.length} valid pinned signature(s), ${anchors.threshold} required`,
      { field: 'signatures' },
    );
  }
  return valid.sort();
}

async function checkFile(
  root: string,
  realRoot: string,
  file: PackageFile,
  i: number,
  options: Pick<VerifyOptions, 'hashCache' | 'cachePieceSize' | 'contentVerified'> = {},
): Promise<VerifiedFile> {
  const field = `body.files[${i}]`;
  const state = inspectPackagePath(realRoot, file.path);
  if (state.state === 'missing') {
    throw new PackageError('file_missing', `${field}: ${file.path} is missing`, { field });
  }
  if (state.state === 'not-regular')
    throw new PackageError('file_tampered', `${field}: ${state.why}`, { field });
  if (state.size !== file.size) {
    throw new PackageError(
      'file_tampered',
      `${field}: ${file.path} is ${state.size} bytes, the manifest says ${file.size}`,
      {
        field,
      },
    );
  }
  const absolutePath = join(root, ...file.path.split('/'));
  let digest: FileDigest;
  try {
    // Hash what was checked: the same inode, reached inside the package (not through a directory
    // swapped for a symbolic link after the check).
    const handle = await openPackageFile(realRoot, file.path, state);
    try {
      digest = await digestOf(handle, absolutePath, file, options);
    } finally {
      await handle.close();
    }
  } catch (err) {
    throw new PackageError('file_tampered', `${field}: ${file.path} cannot be read: ${errorMessage(err)}`, {
      field,
      cause: err,
    });
  }
  if (digest.size !== file.size || digest.blake3 !== file.blake3) {
    throw new PackageError('file_tampered', `${field}: ${file.path} does not match its BLAKE3 hash`, {
      field,
    });
  }
  return { ...file, absolutePath };
}

/** The digest of an open package file: known (cache, or verified by the caller), or hashed now. */
async function digestOf(
  handle: FileHandle,
  absolutePath: string,
  file: PackageFile,
  options: Pick<VerifyOptions, 'hashCache' | 'cachePieceSize' | 'contentVerified'>,
): Promise<FileDigest> {
  const cache = options.hashCache;
  if (cache === undefined && options.contentVerified !== true) return hashHandle(handle, file.size);
  const stamp = stampOf(await handle.stat({ bigint: true }));
  if (options.contentVerified === true) {
    cache?.remember(absolutePath, stamp, file.blake3);
    return { size: Number(stamp.size), blake3: file.blake3 };
  }
  // cast: cache is defined here (the branch above returned when it was not and nothing vouched)
  const c = cache as HashedContentCache;
  if (c.contentHash(absolutePath, stamp) === file.blake3)
    return { size: Number(stamp.size), blake3: file.blake3 };
  if (options.cachePieceSize !== undefined) {
    const { map, size } = await pieceMapOfHandle(handle, options.cachePieceSize, file.size);
    if (size === file.size && map.contentHash === file.blake3)
      c.remember(absolutePath, stamp, file.blake3, map);
    return { size, blake3: map.contentHash };
  }
  const digest = await hashHandle(handle, file.size);
  if (digest.size === file.size && digest.blake3 === file.blake3)
    c.remember(absolutePath, stamp, file.blake3);
  return digest;
}
