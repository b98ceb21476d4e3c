import { existsSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCaptured, tempDir } from './run-captured.js';

describe('test helpers', () => {
  it('runs a CLI with captured output and the given io fields', async () => {
    const run = await runCaptured(
      async (argv, io: { out(l: string): void; err(l: string): void; cwd: string }) => {
        io.out(`cwd ${io.cwd}`);
        io.out(argv.join(' '));
        io.err('warned');
        return 3;
      },
      ['a', 'b'],
      { cwd: '/somewhere' },
    );
    expect(run).toEqual({ code: 3, out: 'cwd /somewhere\na b', err: 'warned' });
  });

  it('makes a fresh directory with the prefix', () => {
    const a = tempDir('heddle-kit-');
    const b = tempDir('heddle-kit-');
    expect(a).not.toBe(b);
    expect(basename(a).startsWith('heddle-kit-')).toBe(true);
    expect(existsSync(a) && statSync(a).isDirectory()).toBe(true);
  });
});
