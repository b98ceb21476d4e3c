import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { toHex, utf8 } from '@heddle/envelope';
import { blake3 as nobleBlake3 } from '@noble/hashes/blake3.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { PackageError } from './errors.js';
import {
  artifactId,
  computeFilePieceMap,
  computePieceMap,
  DEFAULT_PIECE_SIZE,
  isValidPieceSize,
  MIN_PIECE_SIZE,
  parsePieceMap,
  pieceMapToJson,
} from './pieces.js';
import { tempDir } from './test-fixtures.js';

function pattern(n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = i % 251;
  return out;
}

/** The artifact id computed independently with @noble/hashes, straight from the documented layout. */
function independentArtifactId(bytes: Uint8Array, pieceSize: number): string {
  const parts: number[] = [...utf8('heddle.artifact.v1\n')];
  const u64 = (n: number) => {
    const b = new Uint8Array(8);
    new DataView(b.buffer).setBigUint64(0, BigInt(n));
    return [...b];
  };
  parts.push(...u64(pieceSize), ...u64(bytes.length), ...nobleBlake3(bytes));
  for (let off = 0; off < bytes.length; off += pieceSize)
    parts.push(...nobleBlake3(bytes.subarray(off, off + pieceSize)));
  return toHex(nobleBlake3(new Uint8Array(parts)));
}

describe('piece maps and artifact ids', () => {
  it('hash pieces and content as an independent BLAKE3 does, for edge sizes', () => {
    for (const n of [
      0,
      1,
      MIN_PIECE_SIZE - 1,
      MIN_PIECE_SIZE,
      MIN_PIECE_SIZE + 1,
      3 * MIN_PIECE_SIZE,
      100_003,
    ]) {
      const bytes = pattern(n);
      const map = computePieceMap(bytes, MIN_PIECE_SIZE);
      expect(map.totalSize).toBe(n);
      expect(map.pieceHashes.length).toBe(Math.ceil(n / MIN_PIECE_SIZE));
      expect(map.contentHash).toBe(toHex(nobleBlake3(bytes)));
      map.pieceHashes.forEach((h, i) => {
        expect(h).toBe(toHex(nobleBlake3(bytes.subarray(i * MIN_PIECE_SIZE, (i + 1) * MIN_PIECE_SIZE))));
      });
      expect(artifactId(map)).toBe(independentArtifactId(bytes, MIN_PIECE_SIZE));
    }
  });

  it('commits to the piece size: the same bytes with another piece size have another id', () => {
    const bytes = pattern(70_000);
    expect(artifactId(computePieceMap(bytes, 16384))).not.toBe(artifactId(computePieceMap(bytes, 32768)));
    expect(artifactId(computePieceMap(new Uint8Array(0), 16384))).not.toBe(
      artifactId(computePieceMap(new Uint8Array(0), 32768)),
    );
  });

  it('computes the same map streaming from a file as from memory', async () => {
    const bytes = pattern(DEFAULT_PIECE_SIZE * 2 + 1234);
    const path = join(tempDir(), 'f.bin');
    writeFileSync(path, bytes);
    expect(await computeFilePieceMap(path)).toEqual(computePieceMap(bytes));
    writeFileSync(path, new Uint8Array(0));
    expect(await computeFilePieceMap(path)).toEqual(computePieceMap(new Uint8Array(0)));
  });

  it('accepts only power-of-two piece sizes in [16 KiB, 16 MiB]', () => {
    expect(isValidPieceSize(DEFAULT_PIECE_SIZE)).toBe(true);
    for (const bad of [0, 1000, 8192, 3 * 16384, 32 * 1024 * 1024, 1.5, Number.NaN])
      expect(isValidPieceSize(bad)).toBe(false);
    expect(() => computePieceMap(new Uint8Array(1), 1000)).toThrow(
      expect.objectContaining({ code: 'piece_map_invalid' }),
    );
  });

  it('round-trips the JSON form and refuses inconsistent or junk maps, naming the field', () => {
    const map = computePieceMap(pattern(50_000), MIN_PIECE_SIZE);
    expect(parsePieceMap(JSON.parse(JSON.stringify(pieceMapToJson(map))))).toEqual(map);
    const field = (v: unknown) => {
      try {
        parsePieceMap(v);
        return 'ok';
      } catch (e) {
        expect(e).toMatchObject({ code: 'piece_map_invalid' });
        return (e as PackageError).field;
      }
    };
    const j = pieceMapToJson(map);
    expect(field({ ...j, piece_hashes: j.piece_hashes.slice(1) })).toBe('piece_hashes');
    expect(field({ ...j, piece_size: 1000 })).toBe('piece_size');
    expect(field({ ...j, total_size: -1 })).toBe('total_size');
    expect(field({ ...j, content_hash: 'x' })).toBe('content_hash');
    fc.assert(
      fc.property(fc.anything(), (v) => {
        expect(field(v)).not.toBe('ok');
      }),
    );
  });
});
