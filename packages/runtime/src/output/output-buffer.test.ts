import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OutputBuffer } from './output-buffer.js';
import { LineTail } from './output-buffer-lines.js';
import { RotatingLog } from './output-buffer-log.js';

describe('OutputBuffer', () => {
  it('keeps exactly the tail of everything pushed', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 64 }),
        fc.array(fc.uint8Array({ maxLength: 100 })),
        (cap, chunks) => {
          const b = new OutputBuffer(cap);
          for (const c of chunks) b.push(c);
          const all = Buffer.concat(chunks);
          expect(b.bytes()).toEqual(all.subarray(Math.max(0, all.length - cap)));
          expect(b.truncatedBytes).toBe(Math.max(0, all.length - cap));
          expect(b.totalBytes).toBe(all.length);
        },
      ),
    );
  });

  it('refuses a zero capacity', () => {
    expect(() => new OutputBuffer(0)).toThrow(/capacity/);
  });
});

describe('LineTail', () => {
  it('interleaves streams, holds partial lines, caps lines and count', () => {
    const t = new LineTail(3, 16);
    t.push('out', 'a\nb');
    t.push('err', 'e1\n', 'stderr: ');
    t.push('out', 'c\n');
    expect(t.last(10)).toEqual(['a', 'stderr: e1', 'bc']);
    t.push('out', 'x'.repeat(40));
    expect(t.last(1)[0]).toBe(`${'x'.repeat(16)}... [line cut]`);
    // The rest of a cut line is dropped up to its newline: one cut line, however long it runs.
    t.push('out', 'y'.repeat(100));
    t.push('out', 'still the same line\nnext\npartial');
    expect(t.last(3)).toEqual(['bc', `${'x'.repeat(16)}... [line cut]`, 'next']);
    t.flush();
    expect(t.last(2)).toEqual(['next', 'partial']);
  });

  it('handles a flood of short lines in linear time', () => {
    const t = new LineTail(1000);
    const chunk = 'y\n'.repeat(32 * 1024);
    const t0 = performance.now();
    for (let i = 0; i < 200; i++) t.push('out', chunk);
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(t.last(5000)).toHaveLength(1000);
  });
});

describe('RotatingLog', () => {
  it('rotates by size and keeps at most `files` files', () => {
    const dir = mkdtempSync(join(tmpdir(), 'heddle-log-'));
    const log = new RotatingLog(join(dir, 'out.log'), 1024, 3);
    for (let i = 0; i < 20; i++) log.write(Buffer.alloc(300, 48 + (i % 10)));
    log.close();
    const paths = log.paths();
    expect(paths.map((p) => p.slice(dir.length + 1))).toEqual(['out.log.2', 'out.log.1', 'out.log']);
    for (const p of paths) expect(statSync(p).size).toBeLessThanOrEqual(1024);
    expect(readFileSync(join(dir, 'out.log'), 'utf8').endsWith('9'.repeat(300))).toBe(true);
  });
});
