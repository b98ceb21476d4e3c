// Test helpers (not part of the app): run the daemon as a real child process and read its logs.
import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// The daemon runs from source in a real child process: `node --import tsx src/bin.ts`, with a tsconfig
// whose paths map @heddle/* to the packages' sources (so no build is needed).
const here = fileURLToPath(new URL('.', import.meta.url));
const bin = join(here, 'bin.ts');
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const env = { ...process.env, TSX_TSCONFIG_PATH: join(here, '..', 'tsconfig.source.json') };

/** A daemon child process and what it logged. */
export interface Daemon {
  readonly proc: ChildProcess;
  readonly lines: Record<string, unknown>[];
  stderr: string;
  readonly exited: Promise<number | null>;
}

/** Runs `heddle-host <args>` from source in `cwd`. */
export function spawnHost(args: readonly string[], cwd: string): Daemon {
  const proc = spawn(process.execPath, ['--import', tsx, bin, ...args], {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const d: Daemon = {
    proc,
    lines: [],
    stderr: '',
    exited: new Promise((resolve) => proc.on('exit', (code) => resolve(code))),
  };
  let buf = '';
  proc.stdout?.on('data', (chunk: Buffer) => {
    buf += chunk.toString();
    let nl = buf.indexOf('\n');
    while (nl >= 0) {
      d.lines.push(JSON.parse(buf.slice(0, nl)) as Record<string, unknown>);
      buf = buf.slice(nl + 1);
      nl = buf.indexOf('\n');
    }
  });
  proc.stderr?.on('data', (chunk: Buffer) => {
    d.stderr += chunk.toString();
  });
  return d;
}

/** Waits for a log line with `msg` (fails when the daemon exits first). */
export async function waitFor(d: Daemon, msg: string, timeoutMs = 15_000): Promise<Record<string, unknown>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const line = d.lines.find((l) => l.msg === msg);
    if (line) return line;
    if (d.proc.exitCode !== null || Date.now() > end) {
      throw new Error(`no "${msg}" line; stdout ${JSON.stringify(d.lines)}; stderr ${d.stderr}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Kills the daemon (SIGKILL) if it still runs and waits for it. */
export async function kill(d: Daemon | undefined): Promise<void> {
  if (d === undefined || d.proc.exitCode !== null || d.proc.signalCode !== null) return;
  d.proc.kill('SIGKILL');
  await d.exited;
}
