import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import {
  computeFilePieceMap,
  DEFAULT_PIECE_SIZE,
  manifestHashOf,
  type PieceMap,
  type PieceMapJson,
  parseEnvelope,
  pieceLength,
  pieceMapToJson,
  readEnvelopeBytes,
} from '@heddle/package';
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

/**
 * A {@link PackageSource} serving a package directory (the output of `buildCogPackage`): only the
 * files its envelope lists, split into pieces of `pieceSize` bytes (default 256 KiB, at most 1 MiB).
 */
export class DirPackageSource implements PackageSource {
  /** The manifest hash of the package. */
  readonly manifestHash: string;
  readonly #dir: string;
  readonly #envelope: Uint8Array;
  readonly #paths: ReadonlySet<string>;
  readonly #pieceSize: number;
  readonly #maps = new Map<string, Promise<PieceMap>>();

  private constructor(dir: string, envelope: Uint8Array, paths: ReadonlySet<string>, pieceSize: number) {
    this.#dir = dir;
    this.#envelope = envelope;
    this.manifestHash = manifestHashOf(envelope);
    this.#paths = paths;
    this.#pieceSize = pieceSize;
  }

  /**
   * Opens the package in `dir`. When `expectedManifestHash` is given, the envelope must hash to it
   * (`WireError` `manifest_mismatch`). Throws `PackageError` `manifest-invalid` for a bad envelope.
   */
  static open(
    dir: string,
    options: { expectedManifestHash?: string; pieceSize?: number } = {},
  ): DirPackageSource {
    const pieceSize = options.pieceSize ?? DEFAULT_PIECE_SIZE;
    if (pieceSize > MAX_WIRE_PIECE_BYTES) {
      throw new WireError('invalid_argument', `pieceSize must be at most ${MAX_WIRE_PIECE_BYTES}`, {
        field: 'pieceSize',
      });
    }
    const envelope = readEnvelopeBytes(dir);
    const parsed = parseEnvelope(envelope);
    const source = new DirPackageSource(dir, envelope, new Set(parsed.files.map((f) => f.path)), pieceSize);
    if (options.expectedManifestHash !== undefined && options.expectedManifestHash !== source.manifestHash) {
      throw new WireError('manifest_mismatch', `${dir} is not the package ${options.expectedManifestHash}`);
    }
    return source;
  }

  /** The envelope bytes. */
  manifest(): Promise<Uint8Array> {
    return Promise.resolve(this.#envelope);
  }

  /** The piece map of `path` (computed once, streaming). */
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
    const handle = await open(join(this.#dir, path), constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
    try {
      const out = Buffer.allocUnsafe(length);
      let filled = 0;
      while (filled < length) {
        const { bytesRead } = await handle.read(out, filled, length - filled, index * map.pieceSize + filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      return out.subarray(0, filled);
    } finally {
      await handle.close();
    }
  }

  #map(path: string): Promise<PieceMap> {
    if (!this.#paths.has(path)) {
      return Promise.reject(new WireError('invalid_argument', `${path} is not a file of this package`));
    }
    const cached = this.#maps.get(path);
    if (cached !== undefined) return cached;
    const map = computeFilePieceMap(join(this.#dir, path), this.#pieceSize);
    map.catch(() => this.#maps.delete(path));
    this.#maps.set(path, map);
    return map;
  }
}
