import { constants } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  DEFAULT_PIECE_SIZE,
  type HashedContentCache,
  manifestHashOf,
  type PieceMap,
  type PieceMapJson,
  parseEnvelope,
  pieceLength,
  pieceMapOfHandle,
  pieceMapToJson,
  readEnvelopeBytes,
  sharedHashCache,
  stampOf,
} from '@heddle/package';
import { allocFramePayload } from './binary-frame.js';
import { WireError } from './errors.js';
import { MAX_WIRE_PIECE_BYTES } from './limits.js';

/**
 * What a controller serves to the host during one call: the package with one manifest hash, and
 * nothing else. Methods reject (any error) to refuse a request; the session answers `fetch_refused`.
 */
export interface PackageSource {
  /** The manifest hash (BLAKE3 of the envelope bytes) of the package this call may fetch. */
  readonly manifestHash: string;
  /** The exact envelope bytes. */
  manifest(): Promise<Uint8Array>;
  /** The piece map of a file the envelope lists. */
  pieceMap(path: string): Promise<PieceMapJson>;
  /** Piece `index` of a file the envelope lists. */
  piece(path: string, index: number): Promise<Uint8Array>;
}

/** Default time a {@link DirPackageSource} keeps a file open after its last piece read: 2 s. */
export const DEFAULT_IDLE_CLOSE_MS = 2000;

/** Options of {@link DirPackageSource.open}. */
export interface DirPackageSourceOptions {
  /** The manifest hash the envelope must have (`WireError` `manifest_mismatch` otherwise). */
  readonly expectedManifestHash?: string;
  /** Bytes per piece (default 256 KiB, at most 1 MiB). */
  readonly pieceSize?: number;
  /** Time a file stays open after its last piece read before it is closed (default 2 s). */
  readonly idleCloseMs?: number;
  /**
   * Where piece maps computed earlier are looked up (by path and file stamp) and computed ones kept
   * (default `sharedHashCache`, the one a `VerifiedPackageStore` fills when it adds a package).
   */
  readonly hashCache?: HashedContentCache;
}

interface OpenFile {
  readonly handle: Promise<FileHandle>;
  reads: number;
  idle: NodeJS.Timeout | undefined;
}

/**
 * A {@link PackageSource} serving a package directory (the output of `buildCogPackage`): only the
 * files its envelope lists, split into pieces of `pieceSize` bytes (default 256 KiB, at most 1 MiB).
 * Each file is opened once (`O_NOFOLLOW`), on its first piece, and the handle serves every later
 * piece; it is closed after `idleCloseMs` without reads (so a source that is never closed holds no
 * descriptor for long), or by {@link DirPackageSource.close}, after which pieces are refused.
 */
export class DirPackageSource implements PackageSource {
  /** The manifest hash of the package. */
  readonly manifestHash: string;
  readonly #dir: string;
  readonly #envelope: Uint8Array;
  readonly #paths: ReadonlySet<string>;
  readonly #pieceSize: number;
  readonly #maps = new Map<string, Promise<PieceMap>>();
  readonly #handles = new Map<string, OpenFile>();
  readonly #idleCloseMs: number;
  readonly #cache: HashedContentCache;
  #closed = false;

  private constructor(
    dir: string,
    envelope: Uint8Array,
    paths: ReadonlySet<string>,
    pieceSize: number,
    idleCloseMs: number,
    cache: HashedContentCache,
  ) {
    this.#dir = dir;
    this.#cache = cache;
    this.#idleCloseMs = idleCloseMs;
    this.#envelope = envelope;
    this.manifestHash = manifestHashOf(envelope);
    this.#paths = paths;
    this.#pieceSize = pieceSize;
  }

  /**
   * Opens the package in `dir`. When `expectedManifestHash` is given, the envelope must hash to it
   * (`WireError` `manifest_mismatch`). Throws `PackageError` `manifest_invalid` for a bad envelope.
   */
  static open(dir: string, options: DirPackageSourceOptions = {}): DirPackageSource {
    const pieceSize = options.pieceSize ?? DEFAULT_PIECE_SIZE;
    if (pieceSize > MAX_WIRE_PIECE_BYTES) {
      throw new WireError('invalid_argument', `pieceSize must be at most ${MAX_WIRE_PIECE_BYTES}`, {
        field: 'pieceSize',
      });
    }
    const envelope = readEnvelopeBytes(dir);
    const parsed = parseEnvelope(envelope);
    const source = new DirPackageSource(
      dir,
      envelope,
      new Set(parsed.files.map((f) => f.path)),
      pieceSize,
      options.idleCloseMs ?? DEFAULT_IDLE_CLOSE_MS,
      options.hashCache ?? sharedHashCache,
    );
    if (options.expectedManifestHash !== undefined && options.expectedManifestHash !== source.manifestHash) {
      throw new WireError('manifest_mismatch', `${dir} is not the package ${options.expectedManifestHash}`);
    }
    return source;
  }

  /** The envelope bytes. */
  manifest(): Promise<Uint8Array> {
    return Promise.resolve(this.#envelope);
  }

  /**
   * The piece map of `path`: the one kept in the hash cache for the file in its current state (its
   * stamp), else computed in one streaming pass and kept there.
   */
  pieceMap(path: string): Promise<PieceMapJson> {
    return this.#map(path).then(pieceMapToJson);
  }

  /** Piece `index` of `path`. */
  async piece(path: string, index: number): Promise<Uint8Array> {
    const map = await this.#map(path);
    if (!Number.isSafeInteger(index) || index < 0 || index >= map.pieceHashes.length) {
      throw new WireError('invalid_argument', `${path}: no piece ${index}`, { field: 'index' });
    }
    const length = pieceLength(map, index);
    const file = this.#file(path);
    file.reads++;
    clearTimeout(file.idle);
    try {
      const handle = await file.handle;
      const out = allocFramePayload(length); // read straight into the frame that will carry it
      let filled = 0;
      while (filled < length) {
        const { bytesRead } = await handle.read(out, filled, length - filled, index * map.pieceSize + filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      return filled === length ? out : out.subarray(0, filled);
    } finally {
      if (--file.reads === 0 && this.#handles.get(path) === file) {
        file.idle = setTimeout(() => this.#release(path, file), this.#idleCloseMs);
        file.idle.unref();
      }
    }
  }

  /** Number of files held open (one per file a piece was served from). */
  get openFiles(): number {
    return this.#handles.size;
  }

  /**
   * Closes every file handle; later requests for pieces are refused (`WireError` `closed`). Safe to
   * call more than once. Call it when no call serving this source is open any more.
   */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#handles].map(([path, file]) => this.#release(path, file)));
  }

  #file(path: string): OpenFile {
    if (this.#closed) throw new WireError('closed', 'the package source is closed');
    const cached = this.#handles.get(path);
    if (cached !== undefined) return cached;
    const handle = open(join(this.#dir, path), constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
    const file: OpenFile = { handle, reads: 0, idle: undefined };
    handle.catch(() => {
      if (this.#handles.get(path) === file) this.#handles.delete(path); // the next piece tries again
    });
    this.#handles.set(path, file);
    return file;
  }

  /** Forgets `file` and closes its handle once the reads in progress are done with it. */
  async #release(path: string, file: OpenFile): Promise<void> {
    clearTimeout(file.idle);
    if (this.#handles.get(path) === file) this.#handles.delete(path);
    const handle = await file.handle.catch(() => undefined);
    while (file.reads > 0) await new Promise((r) => setImmediate(r));
    await handle?.close().catch(() => undefined);
  }

  #map(path: string): Promise<PieceMap> {
    if (!this.#paths.has(path)) {
      return Promise.reject(new WireError('invalid_argument', `${path} is not a file of this package`));
    }
    const cached = this.#maps.get(path);
    if (cached !== undefined) return cached;
    const map = this.#computeMap(path);
    map.catch(() => this.#maps.delete(path));
    this.#maps.set(path, map);
    return map;
  }

  async #computeMap(path: string): Promise<PieceMap> {
    const absolute = join(resolve(this.#dir), path);
    const handle = await open(absolute, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
    try {
      const stamp = stampOf(await handle.stat({ bigint: true }));
      const kept = this.#cache.pieceMap(absolute, stamp, this.#pieceSize);
      if (kept !== undefined) return kept;
      const { map } = await pieceMapOfHandle(handle, this.#pieceSize);
      this.#cache.remember(absolute, stamp, map.contentHash, map);
      return map;
    } finally {
      await handle.close();
    }
  }
}
