import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PackageError } from './errors.js';
import { DEFAULT_REORDER_BYTES, PieceVerifier } from './piece-verifier.js';
import { artifactId, computePieceMap, MIN_PIECE_SIZE, type PieceMap } from './pieces.js';

const P = MIN_PIECE_SIZE;

function randomBytes(n: number, seed: number): Uint8Array {
  const out = new Uint8Array(n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

const pieceOf = (bytes: Uint8Array, i: number) => bytes.subarray(i * P, (i + 1) * P);

describe('PieceVerifier', () => {
  it('accepts pieces in any order, tracks the have-bitfield and finishes with the artifact id', async () => {
    const bytes = randomBytes(P * 9 + 17, 1);
    const map = computePieceMap(bytes, P);
    const v = await PieceVerifier.create(map, {
      artifactId: artifactId(map),
      contentHash: map.contentHash,
      totalSize: bytes.length,
    });
    expect(v.count).toBe(10);
    for (const i of [3, 0, 9, 1]) expect(v.accept(i, pieceOf(bytes, i))).toBe('accepted');
    expect(v.accept(3, pieceOf(bytes, 3))).toBe('duplicate');
    expect([...v.bitfield()]).toEqual([0b11010000, 0b01000000]);
    expect(v.missing()).toEqual([2, 4, 5, 6, 7, 8]);
    await expect(v.finish(() => undefined)).rejects.toMatchObject({ code: 'piece_rejected' });
    for (const i of v.missing()) v.accept(i, pieceOf(bytes, i));
    expect(v.complete).toBe(true);
    expect(await v.finish((i) => pieceOf(bytes, i))).toBe(artifactId(map));
    expect(await v.finish(() => undefined)).toBe(artifactId(map));
  });

  it('refuses a map that does not match the expected id, content hash or size', async () => {
    const map = computePieceMap(randomBytes(P * 2, 2), P);
    await expect(PieceVerifier.create(map, { artifactId: '0'.repeat(64) })).rejects.toMatchObject({
      code: 'artifact_mismatch',
    });
    await expect(PieceVerifier.create(map, { contentHash: '0'.repeat(64) })).rejects.toMatchObject({
      code: 'artifact_mismatch',
    });
    await expect(PieceVerifier.create(map, { totalSize: 1 })).rejects.toMatchObject({
      code: 'artifact_mismatch',
    });
    const broken: PieceMap = { ...map, pieceHashes: map.pieceHashes.slice(1) };
    await expect(PieceVerifier.create(broken)).rejects.toMatchObject({ code: 'piece_map_invalid' });
  });

  it('refuses wrong lengths and out-of-range indices', async () => {
    const bytes = randomBytes(P + 5, 3);
    const v = await PieceVerifier.create(computePieceMap(bytes, P));
    expect(() => v.accept(1, bytes.subarray(0, 4))).toThrow(/expected 5 bytes/);
    expect(() => v.accept(2, bytes.subarray(0, 5))).toThrow(/out of range/);
    expect(() => v.accept(-1, bytes)).toThrow(PackageError);
    expect(v.held).toBe(0);
  });

  it('catches a map whose piece hashes lie about the content at finish', async () => {
    const real = randomBytes(P * 2, 4);
    const fake = randomBytes(P * 2, 5);
    const map = { ...computePieceMap(fake, P), contentHash: computePieceMap(real, P).contentHash };
    const v = await PieceVerifier.create(map);
    v.accept(0, pieceOf(fake, 0));
    v.accept(1, pieceOf(fake, 1));
    await expect(v.finish((i) => pieceOf(fake, i))).rejects.toMatchObject({ code: 'artifact_mismatch' });
  });

  it('detects random corruption of any piece at exactly that piece (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 12 * P }),
        fc.nat(),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        fc.integer({ min: 1 }),
        async (size, pick, offset, xor, seed) => {
          const bytes = randomBytes(size, seed);
          const map = computePieceMap(bytes, P);
          const v = await PieceVerifier.create(map);
          const bad = pick % v.count;
          const corrupt = pieceOf(bytes, bad).slice();
          corrupt[offset % corrupt.length] = (corrupt[offset % corrupt.length] as number) ^ xor;
          for (let i = 0; i < v.count; i++) {
            if (i === bad) {
              let err: unknown;
              try {
                v.accept(i, corrupt);
              } catch (e) {
                err = e;
              }
              expect(err).toMatchObject({ code: 'piece_rejected', field: `pieces[${bad}]` });
            } else expect(v.accept(i, pieceOf(bytes, i))).toBe('accepted');
          }
          expect(v.missing()).toEqual([bad]);
          v.accept(bad, pieceOf(bytes, bad));
          expect(await v.finish((i) => pieceOf(bytes, i))).toBe(artifactId(map));
        },
      ),
      { numRuns: 60 },
    );
  });

  it('a transfer interrupted and resumed from its bitfield yields the same artifact (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 10 * P }),
        fc.integer({ min: 1 }),
        fc.array(fc.nat(), { maxLength: 30 }),
        fc.nat(),
        async (size, seed, order, lost) => {
          const bytes = randomBytes(size, seed);
          const map = computePieceMap(bytes, P);
          const first = await PieceVerifier.create(map);
          const disk = new Map<number, Uint8Array>();
          for (const o of order) {
            if (first.count === 0) break;
            const i = o % first.count;
            first.accept(i, pieceOf(bytes, i));
            disk.set(i, pieceOf(bytes, i).slice());
          }
          const saved = first.bitfield();
          // The crash lost one stored piece: resume must notice and fetch it again.
          if (disk.size > 0) disk.delete([...disk.keys()][lost % disk.size] as number);
          const resumed = await PieceVerifier.resume(map, saved, (i) => disk.get(i));
          expect(resumed.held).toBe(disk.size);
          for (const i of resumed.missing()) {
            resumed.accept(i, pieceOf(bytes, i));
            disk.set(i, pieceOf(bytes, i).slice());
          }
          expect(await resumed.finish((i) => disk.get(i))).toBe(artifactId(map));
          const assembled = new Uint8Array(size);
          for (const [i, p] of disk) assembled.set(p, i * P);
          expect(artifactId(computePieceMap(assembled, P))).toBe(artifactId(map));
        },
      ),
      { numRuns: 40 },
    );
  });

  it('with a trusted artifact id, hashes each byte once and finishes without reading pieces back', async () => {
    const bytes = randomBytes(P * 3 + 1, 8);
    const map = computePieceMap(bytes, P);
    const v = await PieceVerifier.create(map, { artifactId: artifactId(map) });
    for (const i of [2, 1, 3, 0]) v.accept(i, pieceOf(bytes, i));
    expect(await v.finish(() => undefined)).toBe(artifactId(map));
  });

  it('feeds out-of-order pieces to the content hash from memory: finish reads nothing back', async () => {
    const bytes = randomBytes(P * 8 + 3, 9);
    const map = computePieceMap(bytes, P);
    const v = await PieceVerifier.create(map, { contentHash: map.contentHash });
    for (const i of [1, 3, 2, 0]) v.accept(i, pieceOf(bytes, i));
    expect(v.bufferedBytes).toBe(0); // 0 arrived: 1, 2 and 3 were drained into the hash
    for (const i of [8, 7, 5, 6]) v.accept(i, pieceOf(bytes, i));
    expect(v.bufferedBytes).toBe(3 * P + 3);
    v.accept(4, pieceOf(bytes, 4));
    expect(v.bufferedBytes).toBe(0);
    const reads: number[] = [];
    expect(
      await v.finish((i) => {
        reads.push(i);
        return undefined;
      }),
    ).toBe(artifactId(map));
    expect(reads).toEqual([]);
  });

  it('bounds the reorder buffer: pieces that do not fit are read back (and checked) at finish', async () => {
    const bytes = randomBytes(P * 10, 10);
    const map = computePieceMap(bytes, P);
    const v = await PieceVerifier.create(map, { contentHash: map.contentHash }, { maxReorderBytes: 3 * P });
    let peak = 0;
    for (let i = 9; i >= 0; i--) {
      v.accept(i, pieceOf(bytes, i));
      peak = Math.max(peak, v.bufferedBytes);
    }
    expect(peak).toBe(3 * P);
    const reads: number[] = [];
    const read = (i: number) => {
      reads.push(i);
      return pieceOf(bytes, i);
    };
    expect(await v.finish(read)).toBe(artifactId(map));
    expect(reads).toEqual([1, 2, 3, 4, 5, 6]); // 7, 8 and 9 came from memory, 0 was hashed on arrival
    expect(v.bufferedBytes).toBe(0);
    // A piece read back is checked again: a changed file is refused at that piece.
    const w = await PieceVerifier.create(map, { contentHash: map.contentHash }, { maxReorderBytes: 0 });
    for (let i = 9; i >= 0; i--) w.accept(i, pieceOf(bytes, i));
    const tampered = (i: number) => (i === 4 ? new Uint8Array(P) : pieceOf(bytes, i));
    await expect(w.finish(tampered)).rejects.toMatchObject({ code: 'piece_rejected', field: 'pieces[4]' });
    expect(DEFAULT_REORDER_BYTES).toBe(8 * 1024 * 1024);
  });

  it('keeps a private copy of a buffered piece: the caller may reuse its buffer', async () => {
    const bytes = randomBytes(P * 2, 11);
    const map = computePieceMap(bytes, P);
    const v = await PieceVerifier.create(map, { contentHash: map.contentHash });
    // A Buffer too, whose slice() is a view, not a copy.
    const buffer = Buffer.from(pieceOf(bytes, 1));
    v.accept(1, buffer);
    buffer.fill(0);
    v.accept(0, pieceOf(bytes, 0));
    expect(await v.finish(() => undefined)).toBe(artifactId(map));
  });

  it('rejects a corrupted out-of-order piece at that piece and buffers nothing of it', async () => {
    const bytes = randomBytes(P * 4, 12);
    const map = computePieceMap(bytes, P);
    const v = await PieceVerifier.create(map, { contentHash: map.contentHash });
    v.accept(2, pieceOf(bytes, 2));
    const corrupt = pieceOf(bytes, 3).slice();
    corrupt[5] = (corrupt[5] as number) ^ 0x40;
    expect(() => v.accept(3, corrupt)).toThrow(/pieces\[3\]: BLAKE3/);
    expect(v.bufferedBytes).toBe(P);
    expect(v.missing()).toEqual([0, 1, 3]);
    for (const i of [3, 1, 0]) v.accept(i, pieceOf(bytes, i));
    expect(await v.finish(() => undefined)).toBe(artifactId(map));
  });

  it('deferPieceHashes: accepts on length, checks the content hash, and names a corrupt piece only then', async () => {
    const bytes = randomBytes(P * 6 + 5, 13);
    const map = computePieceMap(bytes, P);
    const opts = { deferPieceHashes: true };
    // Intact, out of order: accepted, finished without reading back (each byte hashed once).
    const ok = await PieceVerifier.create(map, { contentHash: map.contentHash }, opts);
    for (const i of [1, 0, 3, 2, 6, 5, 4]) ok.accept(i, pieceOf(bytes, i));
    const reads: number[] = [];
    expect(
      await ok.finish((i) => {
        reads.push(i);
        return undefined;
      }),
    ).toBe(artifactId(map));
    expect(reads).toEqual([]);
    // A corrupt piece passes accept (right length) but finish refuses at exactly that piece.
    const disk = [...Array(7).keys()].map((i) => pieceOf(bytes, i).slice());
    (disk[4] as Uint8Array)[9] = ((disk[4] as Uint8Array)[9] as number) ^ 1;
    const bad = await PieceVerifier.create(map, { contentHash: map.contentHash }, opts);
    for (let i = 0; i < 7; i++) expect(bad.accept(i, disk[i] as Uint8Array)).toBe('accepted');
    await expect(bad.finish((i) => disk[i])).rejects.toMatchObject({
      code: 'piece_rejected',
      field: 'pieces[4]',
    });
    // A wrong length is still refused on arrival.
    const short = await PieceVerifier.create(map, { contentHash: map.contentHash }, opts);
    expect(() => short.accept(0, pieceOf(bytes, 0).subarray(1))).toThrow(/pieces\[0\]: expected/);
    // A map whose piece hashes match lying content, but not the content hash: artifact_mismatch.
    const other = randomBytes(P * 6 + 5, 14);
    const lying = { ...computePieceMap(other, P), contentHash: map.contentHash };
    const liar = await PieceVerifier.create(lying, { contentHash: map.contentHash }, opts);
    for (let i = 0; i < 7; i++) liar.accept(i, pieceOf(other, i));
    await expect(liar.finish((i) => pieceOf(other, i))).rejects.toMatchObject({ code: 'artifact_mismatch' });
  });

  it('refuses a resume bitfield of the wrong length or with bits past the end', async () => {
    const map = computePieceMap(randomBytes(P * 3, 6), P);
    await expect(PieceVerifier.resume(map, new Uint8Array(2), () => undefined)).rejects.toMatchObject({
      code: 'piece_rejected',
    });
    await expect(
      PieceVerifier.resume(map, new Uint8Array([0b00010000]), () => undefined),
    ).rejects.toMatchObject({
      code: 'piece_rejected',
    });
    const v = await PieceVerifier.resume(map, new Uint8Array([0b11100000]), () => new Uint8Array(P));
    expect(v.held).toBe(0);
  });
});
