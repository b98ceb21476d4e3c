import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixtureWasm, tempDir } from './fixtures/fixtures.js';
import { WASI_RUNNER_PATH } from './wasi-process.js';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

// A stand-in host: starts the runner the way the WASI adapter does (config and module on stdin), prints
// the runner's pid, and waits to be killed.
const HOST = `
const { spawn } = require('node:child_process');
const { readFileSync } = require('node:fs');
const [runner, wasm] = process.argv.slice(1);
const child = spawn(process.execPath, [runner], { stdio: ['pipe', 'ignore', 'ignore', 'pipe'] });
const header = Buffer.from(JSON.stringify({ args: ['loop'], env: {}, preopens: {}, capPages: 16 }));
const len = Buffer.alloc(4);
len.writeUInt32BE(header.length, 0);
child.stdin.end(Buffer.concat([len, header, readFileSync(wasm)]));
child.stdio[3].once('data', () => console.log(child.pid));
setInterval(() => {}, 1000);
`;

describe('the WASI runner', () => {
  it('dies with the host that started it (kill -9), so a lost instance never keeps running', async () => {
    const dir = tempDir();
    const wasm = join(dir, 'loop.wasm');
    writeFileSync(wasm, await fixtureWasm('loop'));
    const host = spawn(process.execPath, ['-e', HOST, WASI_RUNNER_PATH, wasm], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const pid = await new Promise<number>((resolve) => {
      host.stdout.once('data', (c: Buffer) => resolve(Number(c.toString().trim())));
    });
    expect(alive(pid)).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    expect(alive(pid)).toBe(true);
    host.kill('SIGKILL');
    const until = Date.now() + 5_000;
    while (alive(pid) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    expect(alive(pid)).toBe(false);
  });
});
