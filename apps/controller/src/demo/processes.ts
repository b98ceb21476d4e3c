import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where the built CLIs are (the demo runs from apps/controller/dist). */
const here = dirname(fileURLToPath(import.meta.url));
/** The `heddle` CLI entry (built). */
export const HEDDLE: string = join(here, 'bin.js');
/** The `heddle-host` daemon entry (built). */
export const HEDDLE_HOST: string = join(here, '..', '..', 'host', 'dist', 'bin.js');

/** The outcome of one CLI run. */
export interface Run {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

/** Runs a built CLI (`bin`) with `args` to completion. */
export function run(bin: string, args: readonly string[], cwd: string): Run {
  const r = spawnSync(process.execPath, [bin, ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
  });
  return { code: r.status ?? 1, out: r.stdout ?? '', err: r.stderr ?? '' };
}

/** Runs a built CLI and parses its `--json` answer; throws with its error output when it fails. */
export function runJson<T>(bin: string, args: readonly string[], cwd: string): T {
  const r = run(bin, [...args, '--json'], cwd);
  if (r.code !== 0) throw new Error(`${args.join(' ')} failed (${r.code}): ${r.err || r.out}`);
  // cast: JSON this program (or the daemon it started) wrote itself, in the shape named
  return JSON.parse(r.out) as T;
}

/** A daemon started by the demo and what it logged (one JSON object per line). */
export interface Daemon {
  readonly name: string;
  readonly proc: ChildProcess;
  readonly lines: Record<string, unknown>[];
  stderr: string;
}

/** Starts a daemon and resolves once it logs `msg` (rejects if it exits first or after 30 s). */
export async function startDaemon(
  name: string,
  bin: string,
  args: readonly string[],
  cwd: string,
  msg: string,
): Promise<{ daemon: Daemon; line: Record<string, unknown> }> {
  const proc = spawn(process.execPath, [bin, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  const d: Daemon = { name, proc, lines: [], stderr: '' };
  let buf = '';
  proc.stdout?.on('data', (chunk: Buffer) => {
    buf += chunk.toString();
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      try {
        // cast: JSON this program (or the daemon it started) wrote itself, in the shape named
        d.lines.push(JSON.parse(buf.slice(0, nl)) as Record<string, unknown>);
      } catch {
        // not a log line
      }
      buf = buf.slice(nl + 1);
    }
  });
  proc.stderr?.on('data', (chunk: Buffer) => {
    d.stderr += chunk.toString();
  });
  const end = Date.now() + 30_000;
  for (;;) {
    const line = d.lines.find((l) => l.msg === msg);
    if (line !== undefined) return { daemon: d, line };
    if (proc.exitCode !== null || Date.now() > end) {
      proc.kill('SIGKILL');
      throw new Error(`${name} did not start: ${d.stderr || JSON.stringify(d.lines.slice(-3))}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Stops a daemon with SIGTERM (SIGKILL after 5 s); resolves with its exit code. */
export function stopDaemon(d: Daemon): Promise<number | null> {
  if (d.proc.exitCode !== null) return Promise.resolve(d.proc.exitCode);
  return new Promise((resolve) => {
    const kill = setTimeout(() => d.proc.kill('SIGKILL'), 5_000);
    d.proc.once('exit', (code) => {
      clearTimeout(kill);
      resolve(code);
    });
    d.proc.kill('SIGTERM');
  });
}

/**
 * A power loss of a host: SIGKILL of its daemon and of every process started from its data directory
 * (native workloads run in their own process groups and would otherwise outlive it).
 */
export function powerOff(d: Daemon, dataDir: string): void {
  d.proc.kill('SIGKILL');
  const pids = spawnSync('pgrep', ['-f', dataDir], { encoding: 'utf8' }).stdout ?? '';
  for (const pid of pids.split('\n').filter((p) => p !== '')) {
    try {
      process.kill(-Number(pid), 'SIGKILL');
    } catch {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
}

/** Polls `ok` every 250 ms until it holds (true) or `ms` pass (false). */
export async function waitFor(ok: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  for (;;) {
    if (ok()) return true;
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 250));
  }
}
