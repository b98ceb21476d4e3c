import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const INDEX = fileURLToPath(new URL('./index.ts', import.meta.url));

/**
 * A real daemon process (an interval stands in for its server): logs `ready`, throws one uncaught
 * error, and runs `runUntilSignal` with a stop that takes `stopMs` and may fail.
 */
function daemon(stopMs: number, fail: boolean): { child: ChildProcess; lines: () => string[] } {
  const script = `
    import { Logger, runUntilSignal } from ${JSON.stringify(INDEX)};
    const log = new Logger((l) => process.stdout.write(l + '\\n'), () => 0);
    const server = setInterval(() => {}, 1_000);
    const stop = (signal) => new Promise((res, rej) => setTimeout(() => {
      clearInterval(server);
      ${fail} ? rej(new Error('stuck on ' + signal)) : res();
    }, ${stopMs}));
    const pending = runUntilSignal(stop, log);
    setTimeout(() => { throw new Error('late bug'); }, 0);
    setTimeout(() => log.info('ready'), 50);
    process.exitCode = await pending;
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  return { child, lines: () => out.split('\n').filter((l) => l !== '') };
}

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !cond(); i++) await new Promise((r) => setTimeout(r, 25));
  if (!cond()) throw new Error('timed out');
}

function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((res) => child.once('exit', (code) => res(code)));
}

const msgs = (lines: string[]): unknown[] => lines.map((l) => (JSON.parse(l) as { msg: string }).msg);

describe('runUntilSignal', () => {
  it('survives an uncaught exception and stops gracefully on SIGTERM (exit 0)', async () => {
    const d = daemon(10, false);
    const exited = exitOf(d.child);
    await until(() => d.lines().some((l) => l.includes('"ready"')));
    d.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(msgs(d.lines())).toEqual(['unexpected error (the daemon keeps running)', 'ready', 'stopped']);
    expect(d.lines()[2]).toBe(
      '{"ts":"1970-01-01T00:00:00.000Z","level":"info","msg":"stopped","exit_code":0}',
    );
  });

  it('exits 1 when stopping fails', async () => {
    const d = daemon(10, true);
    const exited = exitOf(d.child);
    await until(() => d.lines().some((l) => l.includes('"ready"')));
    d.child.kill('SIGINT');
    expect(await exited).toBe(1);
    const lines = d.lines();
    expect(msgs(lines).slice(-2)).toEqual(['shutdown failed', 'stopped']);
    expect(lines.at(-2)).toContain('"error":"stuck on SIGINT"');
  });

  it('exits at once with 1 on a second signal during shutdown', async () => {
    const d = daemon(20_000, false);
    const exited = exitOf(d.child);
    await until(() => d.lines().some((l) => l.includes('"ready"')));
    d.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 100));
    d.child.kill('SIGTERM');
    expect(await exited).toBe(1);
    expect(d.lines().at(-1)).toBe(
      '{"ts":"1970-01-01T00:00:00.000Z","level":"warn","msg":"second signal during shutdown: exiting now","signal":"SIGTERM"}',
    );
  });
});
