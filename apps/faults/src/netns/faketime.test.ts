// libfaketime as the clock kinds use it (no root needed): a real node process whose wall clock
// follows a file, and whose timers keep real time. Skipped with a message where libfaketime is not
// installed outside CI (in CI it must be: .ci/run installs it).
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { faketimeEnv, faketimeSkipReason, setClock } from './faketime.js';

const skip = faketimeSkipReason();
if (skip !== undefined) console.warn(`[faketime] skipped: ${skip}`);

/** Runs `script` in node under libfaketime reading `file`; resolves with its standard output. */
function run(file: string, script: string): Promise<string> {
  return new Promise((resolve, reject) => {
    // The real time at the spawn (this process is not under libfaketime) as the script's argument.
    const argv = ['-e', script, String(Date.now())];
    execFile(process.execPath, argv, { env: faketimeEnv(file), timeout: 20_000 }, (err, out) =>
      err ? reject(err) : resolve(out),
    );
  });
}

describe('setClock', () => {
  it('writes the offset in whole seconds, signed', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'heddle-ft-')), 'clock');
    setClock(file, 12_400);
    expect(readFileSync(file, 'utf8')).toBe('+12s\n');
    setClock(file, -45_000);
    expect(readFileSync(file, 'utf8')).toBe('-45s\n');
    setClock(file, 0);
    expect(readFileSync(file, 'utf8')).toBe('+0s\n');
  });
});

describe.skipIf(skip !== undefined)('a node process under libfaketime', () => {
  it('reads its wall clock offset from the file, changes it while running, and keeps real timers', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'heddle-ft-')), 'clock');
    setClock(file, -60_000);
    // Prints Date.now() minus the real time (the spawn's real time plus performance.now(), which is
    // monotonic and not faked), then again once the file says +30s and the process has read it.
    const script = `
      const fs = require('node:fs');
      const spawned = Number(process.argv[1]);
      const real = () => spawned + performance.now();
      const off = () => Math.round((Date.now() - real()) / 1000);
      const first = off();
      fs.writeFileSync(${JSON.stringify(file)}, '+30s\\n');
      const t0 = performance.now();
      // libfaketime re-reads the file once its 1 s cache has run out, counted in whole seconds: up to
      // about 2 s. Poll until the new offset shows (or 6 s), then report how long that took.
      const poll = () => {
        const then = off();
        const waited = Math.round(performance.now() - t0);
        if (then === 30 || waited > 6000) console.log(JSON.stringify({ first, then, waited }));
        else setTimeout(poll, 250);
      };
      setTimeout(poll, 250);
    `;
    const out = JSON.parse(await run(file, script)) as { first: number; then: number; waited: number };
    expect(out.first).toBe(-60);
    expect(out.then).toBe(30);
    // The change showed within the cache's bound, and the timers took real time (the monotonic clock
    // is not faked: a faked one would have jumped 90 s).
    expect(out.waited).toBeGreaterThanOrEqual(200);
    expect(out.waited).toBeLessThan(6_000);
  });
});
