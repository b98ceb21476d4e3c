import { type Blake3Hasher, blake3Hex, createBlake3 } from '@heddle/envelope';
import { PackageError } from './errors.js';
import { artifactId, type PieceMap, pieceLength } from './pieces.js';

/** What the verifier expects of the map, from a trusted source (the signed package body, or an id). */
export interface PieceExpectations {
  /** The artifact id the map must have. */
  readonly artifactId?: string;
  /** The content hash the map must carry (the BLAKE3 the signed body lists). */
  readonly contentHash?: string;
  /** The total size the map must carry (the size the signed body lists). */
  readonly totalSize?: number;
}

/** Options of a {@link PieceVerifier}. */
export interface PieceVerifierOptions {
  /**
   * Most bytes of out-of-order pieces held in memory for the running content hash (default
   * {@link DEFAULT_REORDER_BYTES}). A piece that arrives ahead of the in-order prefix is copied into
   * this buffer while it fits, so {@link PieceVerifier.finish} need not read it back; one that does
   * not fit is read back at finish instead. 0 (or a negative value) keeps nothing.
   */
  readonly maxReorderBytes?: number;
  /**
   * Check each piece's BLAKE3 only when the content hash fails (default false). Without a trusted
   * artifact id the content hash is the check that counts, so the piece hashes only say *which*
   * piece was bad: with this set, {@link PieceVerifier.accept} checks a piece's index and length and
   * feeds it to the content hash (each byte is hashed once), and {@link PieceVerifier.finish}, when the
   * content hash differs, reads the pieces back and throws `piece_rejected` at the first whose hash
   * differs from the map (`artifact_mismatch` when none does: the map lied). Ignored with a trusted
   * artifact id (then the piece hashes are the check, and each byte is hashed once anyway).
   */
  readonly deferPieceHashes?: boolean;
}

/** Default bound of the reorder buffer of a {@link PieceVerifier}: 8 MiB. */
export const DEFAULT_REORDER_BYTES: number = 8 * 1024 * 1024;

/** Reads back a piece that was accepted earlier (from disk or memory). */
export type PieceReader = (index: number) => Uint8Array | undefined | Promise<Uint8Array | undefined>;

/** Outcome of {@link PieceVerifier.accept}. */
export type PieceOutcome = 'accepted' | 'duplicate';

/**
 * Verifies the pieces of one artifact as they arrive, in any order: each piece is accepted only if its
 * length and BLAKE3 match the map, and a have-bitfield (bit `i` is bit `7 - i % 8` of byte `i / 8`, as
 * in BitTorrent) records what is held. After an interruption, {@link PieceVerifier.resume} rebuilds the
 * state from a saved bitfield, re-checking every piece it claims.
 *
 * Trust: when the expected artifact id comes from a trusted source (a signed request), the map is
 * authenticated by it and each byte is hashed once. When only the content hash is known (from the
 * signed package body), the whole content is hashed a second time, in order, and checked at
 * {@link PieceVerifier.finish}, so a map whose piece hashes lie is caught too. That running hash is
 * fed as pieces arrive: the in-order ones at once, the ones ahead of it from a bounded reorder buffer
 * (a private copy of each, see {@link PieceVerifierOptions.maxReorderBytes}), so the content is read
 * back only for pieces that did not fit. With {@link PieceVerifierOptions.deferPieceHashes} the piece
 * hashes are checked only to name the bad piece once the content hash failed, so each byte is hashed
 * once on the way in too.
 */
export class PieceVerifier {
  /** The map being verified against. */
  readonly map: PieceMap;
  /** Its artifact id. */
  readonly artifactId: string;
  /** Number of pieces. */
  readonly count: number;
  readonly #have: Uint8Array;
  #held = 0;
  #next = 0;
  readonly #hasher: Blake3Hasher;
  #finished = false;
  // Verified pieces ahead of `#next`, copied, waiting for the running hash (bounded by `#maxReorder`).
  readonly #ahead = new Map<number, Uint8Array>();
  #aheadBytes = 0;
  readonly #maxReorder: number;
  // Without a trusted artifact id the piece hashes are only as good as the map, so the content is
  // hashed a second time (as a running hash over the in-order prefix) and checked at finish.
  readonly #streaming: boolean;
  // Piece hashes checked only when the content hash fails (streaming only; see the option).
  readonly #deferred: boolean;

  private constructor(
    map: PieceMap,
    id: string,
    hasher: Blake3Hasher,
    streaming: boolean,
    maxReorder: number,
    deferred: boolean,
  ) {
    this.map = map;
    this.#deferred = streaming && deferred;
    this.#maxReorder = maxReorder;
    this.artifactId = id;
    this.count = map.pieceHashes.length;
    this.#have = new Uint8Array(Math.ceil(this.count / 8));
    this.#hasher = hasher;
    this.#streaming = streaming;
  }

  /**
   * A verifier for `map`. Throws `artifact_mismatch` when the map does not match the expectations
   * (artifact id, content hash, total size), `piece_map_invalid` when its piece count is inconsistent.
   */
  static async create(
    map: PieceMap,
    expect: PieceExpectations = {},
    options: PieceVerifierOptions = {},
  ): Promise<PieceVerifier> {
    if (map.pieceHashes.length !== Math.ceil(map.totalSize / map.pieceSize)) {
      throw new PackageError(
        'piece_map_invalid',
        'piece_hashes: count does not match total_size / piece_size',
        {
          field: 'piece_hashes',
        },
      );
    }
    const id = artifactId(map);
    const mismatch = (what: string): never => {
      throw new PackageError(
        'artifact_mismatch',
        `${what} of the piece map does not match the expected one`,
        { field: what },
      );
    };
    if (expect.artifactId !== undefined && expect.artifactId !== id) mismatch('artifact_id');
    if (expect.contentHash !== undefined && expect.contentHash !== map.contentHash) mismatch('content_hash');
    if (expect.totalSize !== undefined && expect.totalSize !== map.totalSize) mismatch('total_size');
    const asked = options.maxReorderBytes ?? DEFAULT_REORDER_BYTES;
    const maxReorder = asked > 0 ? Math.floor(asked) : 0; // NaN and negatives keep nothing
    return new PieceVerifier(
      map,
      id,
      await createBlake3(),
      expect.artifactId === undefined,
      maxReorder,
      options.deferPieceHashes === true,
    );
  }

  /**
   * Rebuilds a verifier after an interruption: each piece the saved `bitfield` claims is read back with
   * `read` and re-verified; pieces that are gone or fail are simply missing again. Throws
   * `piece_rejected` for a bitfield of the wrong length or with bits set past the last piece.
   */
  static async resume(
    map: PieceMap,
    bitfield: Uint8Array,
    read: PieceReader,
    expect: PieceExpectations = {},
    options: PieceVerifierOptions = {},
  ): Promise<PieceVerifier> {
    const v = await PieceVerifier.create(map, expect, options);
    if (bitfield.length !== v.#have.length) {
      throw new PackageError(
        'piece_rejected',
        `bitfield: expected ${v.#have.length} bytes, got ${bitfield.length}`,
        { field: 'bitfield' },
      );
    }
    for (let i = v.count; i < bitfield.length * 8; i++) {
      // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
      if (((bitfield[i >> 3] as number) >> (7 - (i & 7))) & 1) {
        throw new PackageError('piece_rejected', `bitfield: bit ${i} is set beyond the last piece`, {
          field: 'bitfield',
        });
      }
    }
    for (let i = 0; i < v.count; i++) {
      // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
      if (!(((bitfield[i >> 3] as number) >> (7 - (i & 7))) & 1)) continue;
      const bytes = await read(i);
      if (bytes !== undefined && v.#check(i, bytes) === undefined) v.#mark(i, bytes);
    }
    return v;
  }

  /**
   * Offers piece `index`. Returns `accepted` (now held) or `duplicate` (already held, bytes ignored).
   * Throws `piece_rejected` (field `pieces[index]`) for an index out of range, a wrong length or a wrong
   * hash; the piece stays missing and may be fetched again, from any source.
   */
  accept(index: number, bytes: Uint8Array): PieceOutcome {
    if (!Number.isSafeInteger(index) || index < 0 || index >= this.count) {
      throw new PackageError(
        'piece_rejected',
        `pieces[${index}]: index out of range (0..${this.count - 1})`,
        { field: `pieces[${index}]` },
      );
    }
    if (this.has(index)) return 'duplicate';
    const problem = this.#check(index, bytes, !this.#deferred);
    if (problem !== undefined)
      throw new PackageError('piece_rejected', `pieces[${index}]: ${problem}`, { field: `pieces[${index}]` });
    this.#mark(index, bytes);
    return 'accepted';
  }

  #check(index: number, bytes: Uint8Array, hash = true): string | undefined {
    const want = pieceLength(this.map, index);
    if (bytes.length !== want) return `expected ${want} bytes, got ${bytes.length}`;
    if (hash && blake3Hex(bytes) !== this.map.pieceHashes[index])
      return 'BLAKE3 does not match the piece map';
    return undefined;
  }

  #mark(index: number, bytes: Uint8Array): void {
    // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
    this.#have[index >> 3] = (this.#have[index >> 3] as number) | (0x80 >> (index & 7));
    this.#held++;
    if (!this.#streaming) return;
    if (index !== this.#next) {
      if (this.#aheadBytes + bytes.length <= this.#maxReorder) {
        this.#ahead.set(index, new Uint8Array(bytes)); // a private copy (not a view, even of a Buffer)
        this.#aheadBytes += bytes.length;
      }
      return; // otherwise it is read back at finish
    }
    this.#hasher.update(bytes);
    this.#next++;
    for (let next = this.#ahead.get(this.#next); next !== undefined; next = this.#ahead.get(this.#next)) {
      this.#ahead.delete(this.#next);
      this.#aheadBytes -= next.length;
      this.#hasher.update(next);
      this.#next++;
    }
  }

  /** Bytes of out-of-order pieces held for the running content hash (at most `maxReorderBytes`). */
  get bufferedBytes(): number {
    return this.#aheadBytes;
  }

  /** True when piece `index` is held. */
  has(index: number): boolean {
    return (
      index >= 0 &&
      index < this.count &&
      // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
      (((this.#have[index >> 3] as number) >> (7 - (index & 7))) & 1) === 1
    );
  }

  /** A copy of the have-bitfield (save it to resume later). */
  bitfield(): Uint8Array {
    return this.#have.slice();
  }

  /** Indices of the pieces still missing, ascending. */
  missing(): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.count; i++) if (!this.has(i)) out.push(i);
    return out;
  }

  /** Number of pieces held. */
  get held(): number {
    return this.#held;
  }

  /** True when every piece is held. */
  get complete(): boolean {
    return this.#held === this.count;
  }

  /**
   * Once complete, checks the whole content against the map's content hash, reading back with `read`
   * (and checking again) the pieces that arrived out of order and did not fit the reorder buffer;
   * `read` is not called when none are left. Returns the artifact id. Throws `piece_rejected` when pieces
   * are missing, `artifact_mismatch` when the content hash differs (the map's piece hashes lied).
   */
  async finish(read: PieceReader): Promise<string> {
    if (this.#finished) return this.artifactId;
    if (!this.complete) {
      throw new PackageError('piece_rejected', `pieces: ${this.count - this.#held} piece(s) still missing`, {
        field: 'pieces',
      });
    }
    if (!this.#streaming) {
      // The map matched a trusted artifact id, so the verified pieces are the content it names.
      this.#finished = true;
      return this.artifactId;
    }
    while (this.#next < this.count) {
      const kept = this.#ahead.get(this.#next);
      if (kept !== undefined) {
        this.#ahead.delete(this.#next);
        this.#aheadBytes -= kept.length;
        this.#hasher.update(kept); // verified when it was accepted, and held privately since
        this.#next++;
        continue;
      }
      const bytes = await read(this.#next);
      const problem =
        bytes === undefined ? 'cannot be read back' : this.#check(this.#next, bytes, !this.#deferred);
      if (problem !== undefined || bytes === undefined) {
        throw new PackageError('piece_rejected', `pieces[${this.#next}]: ${problem}`, {
          field: `pieces[${this.#next}]`,
        });
      }
      this.#hasher.update(bytes);
      this.#next++;
    }
    const digest = this.#hasher.digestHex();
    this.#finished = true;
    if (digest !== this.map.contentHash) {
      if (this.#deferred) await this.#blame(read);
      throw new PackageError(
        'artifact_mismatch',
        'content_hash: the assembled content does not match the content hash',
        {
          field: 'content_hash',
        },
      );
    }
    return this.artifactId;
  }

  /** Finds the first piece whose bytes (read back) do not match the map and throws `piece_rejected` there. */
  async #blame(read: PieceReader): Promise<void> {
    for (let i = 0; i < this.count; i++) {
      const bytes = await read(i);
      const problem = bytes === undefined ? 'cannot be read back' : this.#check(i, bytes);
      if (problem !== undefined) {
        throw new PackageError('piece_rejected', `pieces[${i}]: ${problem}`, { field: `pieces[${i}]` });
      }
    }
  }
}
