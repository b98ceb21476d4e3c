import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type JsonValue, keyPairFromSecret } from '@heddle/envelope';
import { buildCogPackage, MIN_PIECE_SIZE, parseEnvelope } from '@heddle/package';
import { DirPackageSource } from '@heddle/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asObject, countingSource } from './caller.js';

let root: string;
let pkg: string;
const ARTIFACT = 2 * MIN_PIECE_SIZE + 123; // three pieces at the smallest piece size

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'heddle-cp-caller-'));
  const src = join(root, 'src');
  cpSync(join(import.meta.dirname, '../../../examples/wasi-cog'), src, { recursive: true });
  writeFileSync(join(src, 'hello.wasm'), randomBytes(ARTIFACT));
  pkg = join(root, 'pkg');
  await buildCogPackage(src, pkg, { keys: [keyPairFromSecret(new Uint8Array(32).fill(0x42))] });
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('countingSource', () => {
  it('serves what the source serves and reports the bytes served so far of the total', async () => {
    const source = DirPackageSource.open(pkg, { pieceSize: MIN_PIECE_SIZE });
    try {
      const files = parseEnvelope(await source.manifest()).files;
      const total = files.reduce((n, f) => n + f.size, 0);
      const reports: [number, number][] = [];
      const counted = countingSource(source, total, (bytes, t) => reports.push([bytes, t]));
      expect(counted.manifestHash).toBe(source.manifestHash);
      expect(await counted.manifest()).toEqual(await source.manifest());
      expect(reports).toEqual([]); // the envelope and piece maps are not counted
      let served = 0;
      const seen: number[] = [];
      for (const f of files) {
        const map = await counted.pieceMap(f.path);
        expect(map).toEqual(await source.pieceMap(f.path));
        expect(reports).toHaveLength(seen.length);
        for (let i = 0; i < map.piece_hashes.length; i++) {
          const piece = await counted.piece(f.path, i);
          expect(piece).toEqual(await source.piece(f.path, i));
          served += piece.length;
          seen.push(served);
        }
      }
      expect(files.find((f) => f.path === 'hello.wasm')?.size).toBe(ARTIFACT);
      expect(reports.length).toBeGreaterThanOrEqual(3);
      expect(reports).toEqual(seen.map((b) => [b, total]));
      expect(reports.at(-1)).toEqual([total, total]);
    } finally {
      await source.close();
    }
  });

  it('counts a piece served again, and nothing for a piece the source refuses', async () => {
    const source = DirPackageSource.open(pkg, { pieceSize: MIN_PIECE_SIZE });
    try {
      const reports: number[] = [];
      const counted = countingSource(source, 10, (bytes) => reports.push(bytes));
      await counted.piece('hello.wasm', 0);
      await counted.piece('hello.wasm', 0);
      expect(reports).toEqual([MIN_PIECE_SIZE, 2 * MIN_PIECE_SIZE]);
      await expect(counted.piece('hello.wasm', 99)).rejects.toThrow(/no piece 99/);
      await expect(counted.piece('../etc/passwd', 0)).rejects.toThrow(/not a file of this package/);
      await expect(counted.pieceMap('nope')).rejects.toThrow();
      expect(reports).toEqual([MIN_PIECE_SIZE, 2 * MIN_PIECE_SIZE]);
      await counted.piece('hello.wasm', 2);
      expect(reports.at(-1)).toBe(2 * MIN_PIECE_SIZE + 123);
    } finally {
      await source.close();
    }
  });
});

describe('asObject', () => {
  it('returns an object as it is', () => {
    const o = { a: 1, b: [1, 2], c: { d: null } };
    expect(asObject(o)).toBe(o);
    expect(asObject({})).toEqual({});
  });

  it.each<[string, JsonValue]>([
    ['null', null],
    ['an array', [1, 2]],
    ['an empty array', []],
    ['a string', 'x'],
    ['a number', 42],
    ['a boolean', true],
  ])('makes %s an empty object', (_what, value) => {
    expect(asObject(value)).toEqual({});
  });
});
