import { constants } from 'node:fs';
import { type FileHandle, mkdir, open, readdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { errorMessage } from '@heddle/envelope';
import {
  DEFAULT_MAX_FILE_BYTES,
  DEFAULT_MAX_TOTAL_BYTES,
  ENVELOPE_FILE,
  type KindRegistry,
  MAX_ENVELOPE_BYTES,
  manifestHashOf,
  PackageError,
  type PackageFile,
  type ParsedPackage,
  type PieceMap,
  PieceVerifier,
  parseEnvelope,
  parsePieceMap,
  pieceLength,
} from '@heddle/package';
import { WireError } from './errors.js';
import {
  DEFAULT_FETCH_ATTEMPTS,
  DEFAULT_FETCH_TIMEOUT_MS,
  DEFAULT_FETCH_WINDOW,
  MAX_WIRE_PIECE_BYTES,
} from './limits.js';

/**
 * The requests a fetch makes of the controller (implemented by a server session over the call's
 * connection). Each rejects with `WireError`: `timeout` (no answer in `timeoutMs`), `fetch_refused`,
 * or `closed`.
 */
export interface FetchChannel {
  /** The envelope bytes of the package with `manifestHash`. */
  manifest(manifestHash: string, timeoutMs: number): Promise<Uint8Array>;
  /** The piece map (JSON form, unchecked) of file `path`. */
  pieceMap(path: string, timeoutMs: number): Promise<unknown>;
  /** Piece `index` of file `path`. */
  piece(path: string, index: number, timeoutMs: number): Promise<Uint8Array>;
}

/** Options of a package fetch. */
export interface FetchOptions {
  /** Largest total of the file sizes the envelope may claim (default 1 GiB); checked before anything is fetched. */
  readonly maxTotalBytes?: number;
  /** Largest size one file may claim (default 256 MiB). */
  readonly maxFileBytes?: number;
  /** Piece requests in flight at once (default 4). */
  readonly window?: number;
  /** Time each request waits for its answer (default 15 s). */
  readonly timeoutMs?: number;
  /** Attempts per request before the fetch fails with `timeout` (default 3). */
  readonly attempts?: number;
  /** Kind registry used to read the envelope's file list (default: `@heddle/package`'s). */
  readonly kinds?: KindRegistry;
  /**
   * Called with the parsed envelope once it hashed to the manifest hash and its size claims passed,
   * before any file is requested; what it throws ends the fetch as is (nothing was written). A host
   * checks signatures and revocations here, so that a package it would refuse costs no transfer.
   */
  readonly checkEnvelope?: (envelope: ParsedPackage) => void | Promise<void>;
}

async function withRetry<T>(attempts: number, what: string, run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (err) {
      if (!(err instanceof WireError) || err.code !== 'timeout' || attempt >= attempts) {
        if (err instanceof WireError && err.code === 'timeout') {
          throw new WireError('timeout', `${what}: no answer after ${attempts} attempt(s)`, { cause: err });
        }
        throw err;
      }
    }
  }
}

/**
 * Fetches the package with `manifestHash` over `channel` into `destDir` (created; it must be absent or
 * empty) and returns its absolute path. Order: the envelope (must hash to `manifestHash` and parse,
 * with its size claims within the limits, before any file is requested); then per file its piece map
 * (its content hash and total size must be the ones the envelope lists), then its pieces, `window` at
 * a time, each checked by `PieceVerifier` as it arrives and written at its offset; a request that
 * times out is asked again (up to `attempts`), a piece that fails its check ends the fetch with
 * `piece_rejected` naming the file and the piece. On failure the destination is removed. The result
 * still has to be verified against trust anchors (`verifyPackage`): this checks integrity against the
 * manifest hash, not who signed it.
 */
export async function fetchPackage(
  channel: FetchChannel,
  manifestHash: string,
  destDir: string,
  options: FetchOptions = {},
): Promise<string> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_FETCH_TIMEOUT_MS;
  const attempts = options.attempts ?? DEFAULT_FETCH_ATTEMPTS;
  const window = options.window ?? DEFAULT_FETCH_WINDOW;
  if (!/^[0-9a-f]{64}$/.test(manifestHash)) {
    throw new WireError('invalid_argument', 'manifestHash must be 64 lower-case hex characters', {
      field: 'manifestHash',
    });
  }
  const bytes = await withRetry(attempts, 'manifest', () => channel.manifest(manifestHash, timeoutMs));
  if (bytes.length > MAX_ENVELOPE_BYTES || manifestHashOf(bytes) !== manifestHash) {
    throw new WireError('manifest_mismatch', `the envelope served does not hash to ${manifestHash}`, {
      field: 'manifest_hash',
    });
  }
  let parsed: ParsedPackage;
  try {
    parsed = parseEnvelope(bytes, {
      maxTotalBytes: options.maxTotalBytes ?? DEFAULT_MAX_TOTAL_BYTES,
      maxFileBytes: options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES,
      ...(options.kinds === undefined ? {} : { kinds: options.kinds }),
    });
  } catch (err) {
    const field = err instanceof PackageError ? (err.field ?? '$') : '$';
    const code = field === 'body.files' || field.endsWith('.size') ? 'too_large' : 'manifest_invalid';
    throw new WireError(code, errorMessage(err), { field, cause: err });
  }
  // The caller's own checks of the signed envelope (signatures, revocations) come before any file.
  await options.checkEnvelope?.(parsed);
  const files: readonly PackageFile[] = parsed.files;
  const root = resolve(destDir);
  await prepareDestination(root);
  try {
    await writeFile(join(root, ENVELOPE_FILE), bytes, { flag: 'wx' });
    for (let i = 0; i < files.length; i++) {
      // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
      await fetchFile(channel, root, files[i] as PackageFile, i, { timeoutMs, attempts, window });
    }
    return root;
  } catch (err) {
    await rm(root, { recursive: true, force: true });
    throw err;
  }
}

async function prepareDestination(root: string): Promise<void> {
  try {
    await mkdir(root, { recursive: true });
    const entries = await readdir(root);
    if (entries.length > 0) throw new WireError('destination', `${root} is not empty`, { field: 'destDir' });
  } catch (err) {
    if (err instanceof WireError) throw err;
    throw new WireError('destination', `${root}: ${errorMessage(err)}`, {
      field: 'destDir',
      cause: err,
    });
  }
}

interface FileFetchSettings {
  readonly timeoutMs: number;
  readonly attempts: number;
  readonly window: number;
}

async function fetchFile(
  channel: FetchChannel,
  root: string,
  file: PackageFile,
  fileIndex: number,
  settings: FileFetchSettings,
): Promise<void> {
  const field = `files[${fileIndex}]`;
  const raw = await withRetry(settings.attempts, `${file.path} piece map`, () =>
    channel.pieceMap(file.path, settings.timeoutMs),
  );
  let map: PieceMap;
  let verifier: PieceVerifier;
  try {
    map = parsePieceMap(raw);
    if (map.pieceSize > MAX_WIRE_PIECE_BYTES) {
      throw new WireError(
        'too_large',
        `${file.path}: piece size ${map.pieceSize} exceeds ${MAX_WIRE_PIECE_BYTES}`,
        {
          field,
        },
      );
    }
    // Each byte is hashed once: pieces are checked for length as they arrive and fed to the running
    // content hash (the signed check); their own hashes are checked only to name a bad piece once the
    // content hash failed. Pieces that arrive ahead of the in-order prefix wait in memory (about two
    // windows of them), so the file is not read back.
    verifier = await PieceVerifier.create(
      map,
      { contentHash: file.blake3, totalSize: file.size },
      { maxReorderBytes: Math.max(1, settings.window) * 2 * map.pieceSize, deferPieceHashes: true },
    );
  } catch (err) {
    if (err instanceof WireError) throw err;
    throw new WireError('artifact_mismatch', `${file.path}: ${errorMessage(err)}`, {
      field,
      cause: err,
    });
  }
  const target = join(root, file.path);
  await mkdir(dirname(target), { recursive: true });
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);
  const handle = await open(target, flags, 0o644);
  try {
    await fetchPieces(channel, handle, file.path, field, map, verifier, settings);
    // Pieces that did not fit the reorder buffer are read back from the file just written.
    let reader: FileHandle | undefined;
    try {
      await verifier.finish(async (index) => {
        reader ??= await open(target, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
        const length = pieceLength(map, index);
        const buf = Buffer.allocUnsafe(length);
        const { bytesRead } = await reader.read(buf, 0, length, index * map.pieceSize);
        return buf.subarray(0, bytesRead);
      });
    } catch (err) {
      const piece = err instanceof PackageError && err.code === 'piece_rejected' ? err.field : undefined;
      if (piece !== undefined && /^pieces\[\d+\]$/.test(piece)) {
        throw new WireError(
          'piece_rejected',
          `${file.path} piece ${piece.slice(7, -1)}: ${errorMessage(err)}`,
          {
            field: `${field}.${piece}`,
            cause: err,
          },
        );
      }
      throw new WireError('artifact_mismatch', `${file.path}: ${errorMessage(err)}`, {
        field,
        cause: err,
      });
    } finally {
      await reader?.close();
    }
  } finally {
    await handle.close();
  }
}

/** Bytes written between two background flushes of a file being fetched: 8 MiB. */
const SYNC_EVERY_BYTES = 8 * 1024 * 1024;

async function fetchPieces(
  channel: FetchChannel,
  handle: FileHandle,
  path: string,
  field: string,
  map: PieceMap,
  verifier: PieceVerifier,
  settings: FileFetchSettings,
): Promise<void> {
  const queue: number[] = verifier.missing();
  const tries = new Map<number, number>();
  const window = Math.max(1, settings.window);
  // Writes run in the thread pool while the next pieces are requested and checked; at most `window`
  // of them are pending at once (so at most `window` received pieces wait in memory for the disk).
  const writes = new Set<Promise<unknown>>();
  // Written bytes are flushed to the disk as the transfer goes (one `fdatasync` at a time, every
  // SYNC_EVERY_BYTES), so that the sync before the package is renamed into place finds little left.
  let unsynced = 0;
  let syncing: Promise<unknown> = Promise.resolve();
  let failure: unknown;
  const fail = (err: unknown): void => {
    failure ??= err;
  };
  const worker = async (): Promise<void> => {
    for (;;) {
      if (failure !== undefined) return;
      const index = queue.shift();
      if (index === undefined) return;
      const attempt = (tries.get(index) ?? 0) + 1;
      tries.set(index, attempt);
      let bytes: Uint8Array;
      try {
        bytes = await channel.piece(path, index, settings.timeoutMs);
      } catch (err) {
        if (err instanceof WireError && err.code === 'timeout' && attempt < settings.attempts) {
          queue.push(index); // resume: ask for the dropped piece again
          continue;
        }
        fail(
          err instanceof WireError && err.code === 'timeout'
            ? new WireError('timeout', `${path} piece ${index}: no answer after ${attempt} attempt(s)`, {
                field: `${field}.pieces[${index}]`,
              })
            : err,
        );
        return;
      }
      if (failure !== undefined) return;
      try {
        verifier.accept(index, bytes);
      } catch (err) {
        fail(
          new WireError('piece_rejected', `${path} piece ${index}: ${errorMessage(err)}`, {
            field: `${field}.pieces[${index}]`,
            cause: err,
          }),
        );
        return;
      }
      const write = writeFully(handle, bytes, index * map.pieceSize);
      const tracked = write
        .catch((err: unknown) =>
          fail(new WireError('destination', `${path} piece ${index}: ${errorMessage(err)}`, { cause: err })),
        )
        .finally(() => writes.delete(tracked));
      writes.add(tracked);
      unsynced += bytes.length;
      if (unsynced >= SYNC_EVERY_BYTES) {
        unsynced = 0;
        const pending = [...writes];
        syncing = syncing.then(async () => {
          await Promise.all(pending);
          await handle.datasync().catch(() => undefined); // the final sync reports a failure
        });
      }
      while (writes.size >= window && failure === undefined) await Promise.race(writes);
    }
  };
  const workers: Promise<void>[] = [];
  for (let w = 0; w < window; w++) workers.push(worker());
  await Promise.all(workers);
  await Promise.all(writes);
  await syncing;
  if (failure !== undefined) throw failure;
}

/**
 * Writes all of `bytes` at `position`: a short write (a filesystem that filled up part way) is
 * continued, so that the write that cannot go on fails with the system's own error (`ENOSPC`).
 */
async function writeFully(handle: FileHandle, bytes: Uint8Array, position: number): Promise<void> {
  let done = 0;
  while (done < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, done, bytes.length - done, position + done);
    if (bytesWritten <= 0) throw new Error(`no progress writing at ${position + done}`);
    done += bytesWritten;
  }
}
