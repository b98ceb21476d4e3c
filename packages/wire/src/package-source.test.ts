import { appendFileSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { computePieceMap, DEFAULT_PIECE_SIZE, HashedContentCache, stampOf } from '@heddle/package';
import { describe, expect, it } from 'vitest';
import {
  allocFramePayload,
  BINARY_MAGIC,
  BinaryKind,
  decodeBinaryFrame,
  encodeBinaryFrame,
} from './binary-frame.js';
import { DirPackageSource } from './package-source.js';
import { buildPackage } from './test-fixtures.js';

/** Descriptors of this process open on `path` (Linux: /proc/self/fd), or undefined elsewhere. */
function descriptorsOn(path: string): number | undefined {
  if (process.platform !== 'linux') return undefined;
  let n = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) === path) n++;
    } catch {
      // closed meanwhile
    }
  }
  return n;
}

describe('DirPackageSource', () => {
  it('serves the piece map kept in the hash cache for the file as it is, and hashes a changed file again', async () => {
    const built = await buildPackage(300 * 1024);
    const file = join(built.dir, 'run.wasm');
    const cache = new HashedContentCache();
    // What the cache holds for the file's current stamp is served as is (so it was not hashed again).
    const kept = computePieceMap(new Uint8Array(10), DEFAULT_PIECE_SIZE);
    cache.remember(file, stampOf(statSync(file, { bigint: true })), kept.contentHash, kept);
    const source = DirPackageSource.open(built.dir, { hashCache: cache });
    expect((await source.pieceMap('run.wasm')).content_hash).toBe(kept.contentHash);
    await source.close();
    // Once the file changed (a new stamp), a new source hashes it and keeps the new map.
    appendFileSync(file, 'x');
    const again = DirPackageSource.open(built.dir, { hashCache: cache });
    const map = await again.pieceMap('run.wasm');
    expect(map.total_size).toBe(300 * 1024 + 1);
    expect(
      cache.pieceMap(file, stampOf(statSync(file, { bigint: true })), DEFAULT_PIECE_SIZE)?.contentHash,
    ).toBe(map.content_hash);
    await again.close();
  });

  it('serves every piece from one handle per file, and close() releases them', async () => {
    const built = await buildPackage(700 * 1024);
    const source = DirPackageSource.open(built.dir, { pieceSize: 64 * 1024 });
    const file = join(built.dir, 'run.wasm');
    const whole = readFileSync(file);
    const map = await source.pieceMap('run.wasm');
    const pieces = await Promise.all(map.piece_hashes.map((_, i) => source.piece('run.wasm', i)));
    expect(Buffer.concat(pieces).equals(whole)).toBe(true);
    await source.piece('bin/run.sh', 0);
    expect(source.openFiles).toBe(2);
    const open = descriptorsOn(file);
    if (open !== undefined) expect(open).toBe(1);
    await source.close();
    expect(source.openFiles).toBe(0);
    if (open !== undefined) expect(descriptorsOn(file)).toBe(0);
    await expect(source.piece('run.wasm', 0)).rejects.toMatchObject({ code: 'closed' });
    await source.close(); // twice is fine
  });

  it('closes a file left idle, and opens it again for a later piece', async () => {
    const built = await buildPackage(100 * 1024);
    const source = DirPackageSource.open(built.dir, { pieceSize: 64 * 1024, idleCloseMs: 30 });
    const file = join(built.dir, 'run.wasm');
    const first = await source.piece('run.wasm', 0);
    expect(source.openFiles).toBe(1);
    await new Promise((r) => setTimeout(r, 120));
    expect(source.openFiles).toBe(0);
    const open = descriptorsOn(file);
    if (open !== undefined) expect(open).toBe(0);
    expect(Buffer.from(await source.piece('run.wasm', 0)).equals(Buffer.from(first))).toBe(true);
    expect(source.openFiles).toBe(1);
    await source.close();
  });

  it('refuses a piece index past the end without opening anything', async () => {
    const built = await buildPackage(1000);
    const source = DirPackageSource.open(built.dir);
    await expect(source.piece('run.wasm', 1)).rejects.toMatchObject({ code: 'invalid_argument' });
    await expect(source.piece('run.wasm', -1)).rejects.toMatchObject({ code: 'invalid_argument' });
    expect(source.openFiles).toBe(0);
    await source.close();
  });
});

describe('binary frames', () => {
  it('frames a payload from allocFramePayload in place, once; other bytes are copied', () => {
    const payload = allocFramePayload(64 * 1024); // past Buffer's pool: its own ArrayBuffer
    payload.fill(5);
    const framed = encodeBinaryFrame(BinaryKind.piece, 7, payload);
    expect(framed.buffer).toBe(payload.buffer);
    expect(framed.byteOffset + 8).toBe(payload.byteOffset);
    expect([...framed.subarray(0, 10)]).toEqual([BINARY_MAGIC, 1, 0, 0, 0, 0, 0, 7, 5, 5]);
    expect(framed.length).toBe(8 + 64 * 1024);
    // The room in front is used once: a second encode copies, so the first frame is left intact.
    const again = encodeBinaryFrame(BinaryKind.piece, 8, payload);
    expect(again.buffer).not.toBe(payload.buffer);
    expect(framed.readUInt32BE(4)).toBe(7);
    expect(again.readUInt32BE(4)).toBe(8);
    const plain = new Uint8Array([9, 9]);
    const copied = encodeBinaryFrame(BinaryKind.manifest, 1, plain);
    expect(decodeBinaryFrame(copied)).toEqual({ kind: BinaryKind.manifest, id: 1, data: Buffer.from(plain) });
  });
});
