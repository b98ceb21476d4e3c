import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, constants, existsSync, openSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { OutputBuffer } from '../output/output-buffer.js';
import { readableRunnerPath } from './wasi-runner-copy.js';

/**
 * Path of the runner script (`wasi-runner.mjs`), beside this module: `src/wasi/` under vitest and tsx,
 * `dist/` in the built package (tsup copies it there, and the apps' builds copy it beside their bundle).
 */
export const WASI_RUNNER_PATH: string = fileURLToPath(new URL('./wasi-runner.mjs', import.meta.url));

/** True where a directory descriptor can be reached as `/proc/self/fd/<n>` (Linux). */
export const PROC_FD_DIR_USABLE: boolean = process.platform === 'linux' && existsSync('/proc/self/fd');

/** Exit code of the runner when the guest trapped (an `unreachable`, an out-of-bounds access). */
export const WASI_TRAP_EXIT_CODE = 134;
/** Exit code of the runner when the module could not be compiled or instantiated. */
export const WASI_SETUP_EXIT_CODE = 125;

/** What one run of the runner is given. */
export interface WasiRunSpec {
  /** The module bytes (already capped), sent to the runner on stdin after the config header. */
  readonly bytes: Uint8Array;
  /** The guest's argv, program name first. */
  readonly args: readonly string[];
  /** The guest's whole environment. */
  readonly env: Readonly<Record<string, string>>;
  /** Guest path to host directory (`{'/data': dataDir}`). */
  readonly preopens: Readonly<Record<string, string>>;
  /** Memory cap in pages (reported back in evidence). */
  readonly capPages: number;
  /** For a module that imports its memory: how the runner creates it. */
  readonly importedMemory?: { module: string; name: string; initial: number; maximum: number };
  /** V8 heap limit of the runner process in MiB (the JS side; wasm memory is capped separately). */
  readonly runnerHeapMb: number;
  /** Bytes of stdout and of stderr kept (the tail). */
  readonly outputBytes: number;
  /** Called with each chunk of guest output as it arrives (for logs). */
  readonly onOutput?: (stream: 'stdout' | 'stderr', chunk: Buffer) => void;
  /** The account the runner runs as (uid/gid set at spawn); undefined runs it as this process's user. */
  readonly user?: { readonly uid: number; readonly gid: number };
  /**
   * CPU seconds the run may use (`RLIMIT_CPU`, soft, set by `ulimit -S -t` in a `/bin/sh` wrapper that
   * `exec`s the runner): past it the kernel sends SIGXCPU, which ends the runner. 0: no limit.
   */
  readonly cpuSeconds?: number;
  /** Wall-clock limit of the run in ms: past it the run is stopped (SIGTERM, SIGKILL 1 s later). 0: none. */
  readonly maxRunMs?: number;
}

/**
 * The wrapper that sets the runner's limits and `exec`s it: no core dumps, then `RLIMIT_CPU` (soft)
 * when `$1` is not 0. Arguments: `$0` the name, `$1` CPU seconds, then the runner's argv.
 */
export const WASI_LIMITS_SCRIPT: string = [
  'ulimit -c 0 2>/dev/null',
  'if [ "$1" != 0 ]; then ulimit -S -t "$1" || { echo "heddle: cannot set the CPU time limit" >&2; exit 125; }; fi',
  'shift',
  'exec "$@"',
].join('\n');

/** Status lines the runner writes on fd 3. */
export interface WasiRunnerStatus {
  readonly event: 'started' | 'exit' | 'trap' | 'error';
  readonly code?: number;
  readonly message?: string;
  readonly memoryPages?: number | null;
  readonly capPages?: number;
}

/** One status line; a line of another shape is dropped like a torn one. */
const WasiRunnerStatusSchema = z.object({
  event: z.enum(['started', 'exit', 'trap', 'error']),
  code: z.number().exactOptional(),
  message: z.string().exactOptional(),
  memoryPages: z.number().nullable().exactOptional(),
  capPages: z.number().exactOptional(),
}) satisfies z.ZodType<WasiRunnerStatus>;

/** The status lines of a runner's fd 3 output, in order; blank, torn or malformed lines are skipped. */
export function parseRunnerStatuses(text: string): WasiRunnerStatus[] {
  const statuses: WasiRunnerStatus[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      continue; // a torn last line of a killed runner
    }
    const r = WasiRunnerStatusSchema.safeParse(json);
    if (r.success) statuses.push(r.data);
  }
  return statuses;
}

/** How a run of the runner ended. */
export interface WasiRunResult {
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly startedAtMs: number;
  readonly endedAtMs: number;
  /** True when the stop escalated to SIGKILL. */
  readonly killed: boolean;
  /** Set when the run was ended because it ran past `maxRunMs`. */
  readonly timedOutAfterMs?: number;
  /** The run's CPU limit in seconds (0: none), for the evidence of a SIGXCPU. */
  readonly cpuSeconds: number;
  readonly stdout: OutputBuffer;
  readonly stderr: OutputBuffer;
  /** The runner's status lines, in order. */
  readonly statuses: readonly WasiRunnerStatus[];
}

/** A run in progress: its process, a promise of its end, and a stop. */
export interface WasiRun {
  readonly pid: number | undefined;
  readonly startedAtMs: number;
  readonly done: Promise<WasiRunResult>;
  /** SIGTERM, then SIGKILL after `graceMs` if it is still alive; resolves with the result. */
  stop(graceMs: number): Promise<WasiRunResult>;
}

/**
 * Spawns the runner (`process.execPath`, no inherited environment, no shell) for one run of a module.
 * The guest's stdout and stderr are captured into bounded buffers; the runner's status lines are parsed
 * from fd 3 (bounded to 64 KiB).
 */
export function spawnWasiRun(spec: WasiRunSpec): WasiRun {
  const config: { preopens: Readonly<Record<string, string>> } & Record<string, unknown> = {
    args: spec.args,
    env: spec.env,
    preopens: spec.preopens,
    capPages: spec.capPages,
    ...(spec.importedMemory ? { importedMemory: spec.importedMemory } : {}),
  };
  // Each preopened directory is opened here and handed to the runner as a descriptor (fd 4, 5, ...),
  // which it reaches as /proc/self/fd/<n> (Linux): an unprivileged runner then needs no search
  // permission on the directory's ancestors, and it gets exactly that directory.
  const passFds = PROC_FD_DIR_USABLE && Object.keys(spec.preopens).length > 0;
  const dirFds: number[] = [];
  const preopens: Record<string, string> = {};
  try {
    for (const [guest, host] of Object.entries(spec.preopens)) {
      if (!passFds) {
        preopens[guest] = host;
        continue;
      }
      dirFds.push(openSync(host, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW));
      preopens[guest] = `/proc/self/fd/${3 + dirFds.length}`;
    }
  } catch (err) {
    for (const fd of dirFds) closeSync(fd);
    throw err;
  }
  config.preopens = preopens;
  const startedAtMs = Date.now();
  const runner = [
    process.execPath,
    '--no-warnings',
    `--max-old-space-size=${spec.runnerHeapMb}`,
    // An unprivileged runner reads a copy it can reach, wherever the package is installed.
    spec.user === undefined ? WASI_RUNNER_PATH : readableRunnerPath(WASI_RUNNER_PATH),
  ];
  let child: ChildProcess;
  try {
    child = spawn(
      '/bin/sh',
      ['-c', WASI_LIMITS_SCRIPT, 'heddle-wasi', String(spec.cpuSeconds ?? 0), ...runner],
      {
        stdio: ['pipe', 'pipe', 'pipe', 'pipe', ...dirFds],
        env: {},
        windowsHide: true,
        // An unprivileged runner starts in `/`: the host's working directory may be closed to it.
        ...(spec.user === undefined ? {} : { uid: spec.user.uid, gid: spec.user.gid, cwd: '/' }),
      },
    );
  } finally {
    // The runner has its own copies.
    for (const fd of dirFds) closeSync(fd);
  }
  const stdout = new OutputBuffer(spec.outputBytes);
  const stderr = new OutputBuffer(spec.outputBytes);
  let statusText = '';
  let killed = false;
  let timedOutAfterMs: number | undefined;
  child.stdout?.on('data', (c: Buffer) => {
    stdout.push(c);
    spec.onOutput?.('stdout', c);
  });
  child.stderr?.on('data', (c: Buffer) => {
    stderr.push(c);
    spec.onOutput?.('stderr', c);
  });
  const fd3 = child.stdio[3];
  fd3?.on('data', (c: Buffer) => {
    if (statusText.length < 65536) statusText += c.toString('utf8');
  });
  // The runner may exit (or be killed) before reading all of its stdin: ignore EPIPE.
  child.stdin?.on('error', () => {});
  // The config (the guest's environment, its ingest token included) goes on stdin, never in argv.
  const header = Buffer.from(JSON.stringify(config), 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32BE(header.length, 0);
  child.stdin?.end(Buffer.concat([length, header, spec.bytes]));

  const done = new Promise<WasiRunResult>((resolve) => {
    let settled = false;
    const finish = (code: number | null, signal: NodeJS.Signals | null): void => {
      if (settled) return;
      settled = true;
      const statuses = parseRunnerStatuses(statusText);
      resolve({
        exitCode: code,
        signal,
        startedAtMs,
        endedAtMs: Date.now(),
        killed,
        ...(timedOutAfterMs === undefined ? {} : { timedOutAfterMs }),
        cpuSeconds: spec.cpuSeconds ?? 0,
        stdout,
        stderr,
        statuses,
      });
    };
    child.on('error', (err) => {
      stderr.push(Buffer.from(`runner: ${err.message}\n`));
      finish(null, null);
    });
    // 'close' waits for the stdio streams, so the buffers hold everything the guest wrote.
    child.on('close', finish);
  });

  const stop = (graceMs: number): Promise<WasiRunResult> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(
        () => {
          if (child.exitCode === null && child.signalCode === null) {
            killed = true;
            child.kill('SIGKILL');
          }
        },
        Math.max(0, graceMs),
      );
      void done.then(() => clearTimeout(timer));
    }
    return done;
  };
  if (spec.maxRunMs !== undefined && spec.maxRunMs > 0) {
    const limit = spec.maxRunMs;
    const timer = setTimeout(() => {
      timedOutAfterMs = limit;
      void stop(1000);
    }, limit);
    void done.then(() => clearTimeout(timer));
  }

  return {
    pid: child.pid,
    startedAtMs,
    done,
    stop,
  };
}
