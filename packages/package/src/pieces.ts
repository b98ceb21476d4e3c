import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { blake3, blake3Hex, concatBytes, createBlake3, fromHex, toHex, utf8 } from '@heddle/envelope';
import { z } from 'zod';
import { PackageError, zodIssue } from './errors.js';
import { hex64 } from './hex.js';

/**
 * Default piece size: 256 KiB. Chosen for small edge devices (a Raspberry Pi, a Seed): a host keeps a
 * few pieces in flight (4 x 256 KiB = 1 MiB of buffers), a piece fits one WebSocket binary frame well
 * under the 1 MiB frame limit, a corrupt piece costs at most 256 KiB to fetch again, and the piece list
 * stays small (a 64 MiB artifact has 256 pieces, an 8 KiB hash list). Larger pieces would cut the hash
 * list further but raise memory per piece and the cost of a retry on a flaky link.
 */
export const DEFAULT_PIECE_SIZE: number = 256 * 1024;

/** Smallest allowed piece size: 16 KiB. */
export const MIN_PIECE_SIZE: number = 16 * 1024;

/** Largest allowed piece size: 16 MiB. */
export const MAX_PIECE_SIZE: number = 16 * 1024 * 1024;

/** Most pieces one map may list (1 Mi pieces, a 32 MiB hash list). */
export const MAX_PIECES: number = 1024 * 1024;

/** The prefix of the artifact id preimage. */
export const ARTIFACT_ID_TAG = 'heddle.artifact.v1\n';

/** A file split into fixed-size pieces, each with its BLAKE3 hash. */
export interface PieceMap {
  /** Bytes per piece (a power of two in [16 KiB, 16 MiB]); the last piece may be shorter. */
  readonly pieceSize: number;
  /** Total size of the file in bytes. */
  readonly totalSize: number;
  /** BLAKE3 of the whole file, hex (the hash a package body lists). */
  readonly contentHash: string;
  /** BLAKE3 of each piece, hex, `ceil(totalSize / pieceSize)` of them (none for an empty file). */
  readonly pieceHashes: readonly string[];
}

/** The JSON form of a piece map (as sent over the wire). */
export interface PieceMapJson {
  piece_size: number;
  total_size: number;
  content_hash: string;
  piece_hashes: string[];
}

/** True for a valid piece size: a power of two between {@link MIN_PIECE_SIZE} and {@link MAX_PIECE_SIZE}. */
export function isValidPieceSize(size: number): boolean {
  return (
    Number.isSafeInteger(size) &&
    size >= MIN_PIECE_SIZE &&
    size <= MAX_PIECE_SIZE &&
    (size & (size - 1)) === 0
  );
}

/** Number of pieces of a file of `totalSize` bytes. */
export function pieceCount(totalSize: number, pieceSize: number): number {
  return Math.ceil(totalSize / pieceSize);
}

/** Length in bytes of piece `index`. */
export function pieceLength(map: Pick<PieceMap, 'pieceSize' | 'totalSize'>, index: number): number {
  return Math.min(map.pieceSize, map.totalSize - index * map.pieceSize);
}

function checkPieceSize(pieceSize: number): void {
  if (!isValidPieceSize(pieceSize)) {
    throw new PackageError(
      'piece_map_invalid',
      `piece_size: ${pieceSize} is not a power of two in [${MIN_PIECE_SIZE}, ${MAX_PIECE_SIZE}]`,
      {
        field: 'piece_size',
      },
    );
  }
}

/** Computes the piece map of in-memory bytes. */
export function computePieceMap(bytes: Uint8Array, pieceSize: number = DEFAULT_PIECE_SIZE): PieceMap {
  checkPieceSize(pieceSize);
  const pieceHashes: string[] = [];
  for (let off = 0; off < bytes.length; off += pieceSize)
    pieceHashes.push(blake3Hex(bytes.subarray(off, off + pieceSize)));
  return { pieceSize, totalSize: bytes.length, contentHash: blake3Hex(bytes), pieceHashes };
}

/** Computes the piece map of a file in one streaming pass (does not follow a symbolic link). */
export async function computeFilePieceMap(
  path: string,
  pieceSize: number = DEFAULT_PIECE_SIZE,
): Promise<PieceMap> {
  checkPieceSize(pieceSize);
  const handle = await open(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  try {
    const whole = await createBlake3();
    const buffer = Buffer.allocUnsafe(pieceSize);
    const pieceHashes: string[] = [];
    let totalSize = 0;
    for (;;) {
      let filled = 0;
      while (filled < pieceSize) {
        const { bytesRead } = await handle.read(buffer, filled, pieceSize - filled, totalSize + filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      if (filled === 0) break;
      const piece = buffer.subarray(0, filled);
      whole.update(piece);
      pieceHashes.push(blake3Hex(piece));
      totalSize += filled;
      if (filled < pieceSize) break;
    }
    return { pieceSize, totalSize, contentHash: whole.digestHex(), pieceHashes };
  } finally {
    await handle.close();
  }
}

function u64be(n: number): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, BigInt(n));
  return out;
}

/**
 * The artifact id: BLAKE3 of `"heddle.artifact.v1\n" || u64be(piece_size) || u64be(total_size) ||
 * content_hash (32 bytes) || piece_hash[0] || ... || piece_hash[n-1]` (32 bytes each), as hex. It
 * commits to the piece size, the total size, the content hash and every piece hash.
 */
export function artifactId(map: PieceMap): string {
  const parts: Uint8Array[] = [
    utf8(ARTIFACT_ID_TAG),
    u64be(map.pieceSize),
    u64be(map.totalSize),
    fromHex(map.contentHash, 32),
  ];
  for (const h of map.pieceHashes) parts.push(fromHex(h, 32));
  return toHex(blake3(concatBytes(...parts)));
}

/** Schema of the JSON form of a piece map (consistency is checked by {@link parsePieceMap}). */
export const PieceMapJsonSchema: z.ZodType<PieceMapJson> = z.strictObject({
  piece_size: z.int(),
  total_size: z.int().nonnegative(),
  content_hash: hex64(),
  piece_hashes: z.array(hex64()).max(MAX_PIECES),
});

/**
 * Validates the JSON form of a piece map: schema, a valid piece size, and exactly
 * `ceil(total_size / piece_size)` piece hashes. Throws `piece_map_invalid` naming the field.
 */
export function parsePieceMap(value: unknown): PieceMap {
  const r = PieceMapJsonSchema.safeParse(value);
  if (!r.success) {
    const { field, message } = zodIssue(r.error);
    throw new PackageError('piece_map_invalid', message, { field });
  }
  const j = r.data;
  checkPieceSize(j.piece_size);
  const n = pieceCount(j.total_size, j.piece_size);
  if (j.piece_hashes.length !== n) {
    throw new PackageError(
      'piece_map_invalid',
      `piece_hashes: expected ${n} hashes for ${j.total_size} bytes, got ${j.piece_hashes.length}`,
      {
        field: 'piece_hashes',
      },
    );
  }
  return {
    pieceSize: j.piece_size,
    totalSize: j.total_size,
    contentHash: j.content_hash,
    pieceHashes: j.piece_hashes,
  };
}

/** The JSON form of a piece map. */
export function pieceMapToJson(map: PieceMap): PieceMapJson {
  return {
    piece_size: map.pieceSize,
    total_size: map.totalSize,
    content_hash: map.contentHash,
    piece_hashes: [...map.pieceHashes],
  };
}
