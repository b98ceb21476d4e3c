import { spawn } from 'node:child_process';
import { closeSync, lstatSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { killProcessGroup } from '../local/process-group.js';
import { ensureOutputFifos, FifoReader, openForChild } from './native-output.js';

const dir = mkdtempSync(join(tmpdir(), 'heddle-fifo-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const delay = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('native output FIFOs', () => {
  it('creates the FIFOs once, replacing anything else at their paths', () => {
    writeFileSync(join(dir, 'stdout.fifo'), 'not a fifo');
    const fifos = ensureOutputFifos(dir);
    if (fifos === undefined) throw new Error('no FIFOs');
    expect(lstatSync(fifos.stdout).isFIFO()).toBe(true);
    expect(lstatSync(fifos.stderr).isFIFO()).toBe(true);
    expect(ensureOutputFifos(dir)).toEqual(fifos);
  });

  it('a program whose reader died keeps running (no SIGPIPE), and a new reader gets what it wrote meanwhile', async () => {
    const fifos = ensureOutputFifos(dir);
    if (fifos === undefined) throw new Error('no mkfifo');
    let first = '';
    const reader = new FifoReader(fifos.stdout, (c) => {
      first += c.toString();
    });
    const fds = openForChild(fifos.stdout);
    const child = spawn('/bin/sh', ['-c', 'i=0; while :; do i=$((i+1)); echo "line $i"; sleep 0.05; done'], {
      detached: true,
      stdio: ['ignore', fds.write, 'ignore', fds.keep],
    });
    closeSync(fds.write);
    closeSync(fds.keep);
    try {
      await delay(200);
      expect(first).toContain('line 1');
      // The host's reader goes away (the host was killed): the program writes on.
      reader.destroy();
      await reader.ended;
      await delay(400);
      expect(child.exitCode).toBeNull();
      expect(child.signalCode).toBeNull();
      let second = '';
      const again = new FifoReader(fifos.stdout, (c) => {
        second += c.toString();
      });
      await delay(200);
      const seen = second.split('\n').filter((l) => l.startsWith('line '));
      // What was buffered while nobody read comes first, then the rest.
      expect(seen.length).toBeGreaterThan(5);
      const lastFirst = Number(first.trim().split('\n').at(-1)?.split(' ')[1]);
      expect(Number(seen[0]?.split(' ')[1])).toBeGreaterThan(lastFirst);
      killProcessGroup(child.pid ?? 0, 'SIGKILL');
      await again.ended;
    } finally {
      killProcessGroup(child.pid ?? 0, 'SIGKILL');
    }
  });
});
