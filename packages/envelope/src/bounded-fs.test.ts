import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeDirs, readFileBounded, readTextBounded } from './bounded-fs.js';

const dir = mkdtempSync(join(tmpdir(), 'heddle-bounded-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('readFileBounded', () => {
  it('reads a file up to the limit exactly, and refuses one byte more with file_too_large', () => {
    const p = join(dir, 'f');
    writeFileSync(p, 'x'.repeat(100));
    expect(readTextBounded(p, 100)).toBe('x'.repeat(100));
    expect(() => readFileBounded(p, 99)).toThrow(expect.objectContaining({ code: 'file_too_large' }));
    writeFileSync(p, '');
    expect(readFileBounded(p, 0).length).toBe(0);
  });

  it('stops reading a device that never ends (/dev/zero) at the limit', () => {
    const t = Date.now();
    expect(() => readFileBounded('/dev/zero', 64 * 1024)).toThrow(
      expect.objectContaining({ code: 'file_too_large', message: expect.stringContaining('/dev/zero') }),
    );
    expect(Date.now() - t).toBeLessThan(2000);
  });

  it('reads a /proc file whose size says 0, and refuses a directory with EISDIR', () => {
    expect(readTextBounded('/proc/self/status', 1 << 20)).toMatch(/^Name:/);
    expect(() => readFileBounded(dir, 10)).toThrow(expect.objectContaining({ code: 'EISDIR' }));
  });
});

describe('makeDirs', () => {
  it('creates missing parents with the mode and accepts an existing directory', () => {
    const p = join(dir, 'a', 'b', 'c');
    makeDirs(p, 0o700);
    makeDirs(p, 0o700);
    expect(() => makeDirs(join(dir, 'a', 'b', 'c', 'd'))).not.toThrow();
  });

  it('fails at once under /proc (where mkdirSync recursive spins forever) and on a file in the way', () => {
    const t = Date.now();
    expect(() => makeDirs('/proc/self/heddle-home/data')).toThrow(
      expect.objectContaining({ code: 'ENOENT' }),
    );
    expect(Date.now() - t).toBeLessThan(2000);
    writeFileSync(join(dir, 'file'), '');
    expect(() => makeDirs(join(dir, 'file', 'x'))).toThrow(expect.objectContaining({ code: 'ENOTDIR' }));
  });
});
