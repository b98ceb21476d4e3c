import { type ChildProcess, spawn } from 'node:child_process';

/** A child process that logs one JSON object per line on standard output, and what it logged. */
export interface LoggedProcess {
  readonly proc: ChildProcess;
  /** Every line of standard output, parsed (a line that is not JSON as `{msg: "(not JSON)", text}`). */
  readonly lines: Record<string, unknown>[];
  /** Standard error so far. */
  stderr: string;
  /** Resolves with the exit code (null when a signal ended it). */
  readonly exited: Promise<number | null>;
}

/**
 * Starts `command args` (a daemon such as `heddle-host run`) with piped output and collects its JSON
 * log lines; for tests and tools that drive the daemons as real processes. `detached`: the process
 * leads a process group of its own (its children not detached in turn join it), so
 * `process.kill(-pid)` ends it with them.
 */
export function spawnLogged(
  command: string,
  args: readonly string[],
  options: { readonly cwd: string; readonly env?: NodeJS.ProcessEnv; readonly detached?: boolean },
): LoggedProcess {
  const proc = spawn(command, [...args], {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached === true,
  });
  const d: LoggedProcess = {
    proc,
    lines: [],
    stderr: '',
    exited: new Promise((resolve) => proc.on('exit', (code) => resolve(code))),
  };
  let buf = '';
  proc.stdout?.on('data', (chunk: Buffer) => {
    buf += chunk.toString();
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const text = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      try {
        // cast: a daemon's log line is one JSON object (a line that is not is kept as text below).
        d.lines.push(JSON.parse(text) as Record<string, unknown>);
      } catch {
        d.lines.push({ msg: '(not JSON)', text });
      }
    }
  });
  proc.stderr?.on('data', (chunk: Buffer) => {
    d.stderr += chunk.toString();
  });
  return d;
}

/** Waits for a log line whose `msg` is `msg`; rejects (with what was logged) when the process exits first or after `timeoutMs`. */
export async function waitForLog(
  d: LoggedProcess,
  msg: string,
  timeoutMs = 15_000,
): Promise<Record<string, unknown>> {
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

/** Kills the process (SIGKILL) if it still runs, and waits for it. */
export async function killLogged(d: LoggedProcess | undefined): Promise<void> {
  if (d === undefined || d.proc.exitCode !== null || d.proc.signalCode !== null) return;
  d.proc.kill('SIGKILL');
  await d.exited;
}
