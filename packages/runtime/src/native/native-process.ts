import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import type { RunEvidence } from '../contract.js';
import { messageOf } from '../errors.js';
import { childExited, killProcessGroup, terminateProcessGroup } from '../local/process-group.js';
import { DEFAULT_OUTPUT_BUFFER_BYTES, OutputBuffer } from '../output/output-buffer.js';
import type { LineTail } from '../output/output-buffer-lines.js';
import type { RotatingLog } from '../output/output-buffer-log.js';
import { FifoReader, type NativeFifos, openForChild } from './native-output.js';
import type { NativeRunUser } from './native-user.js';

/** Resource limits applied to a native process with `ulimit` in a small `/bin/sh` wrapper that `exec`s it. */
export interface NativeLimits {
  /** RLIMIT_AS in bytes (address space, not RSS); 0 = not set. */
  readonly addressSpaceBytes: number;
  /** RLIMIT_NOFILE (soft); 0 = not set. */
  readonly openFiles: number;
  /** RLIMIT_CPU (soft) in seconds: past it the kernel sends SIGXCPU; 0 = not set. */
  readonly cpuSeconds: number;
}

/** Everything needed to start one run of a native program. */
export interface NativeSpawnSpec {
  readonly instanceId: string;
  /** Absolute path of the program. */
  readonly executable: string;
  /** Arguments after the program. */
  readonly args: readonly string[];
  /** The whole environment (nothing else is inherited). */
  readonly env: Readonly<Record<string, string>>;
  /** Working directory. */
  readonly cwd: string;
  /** The account to run as (uid/gid set at spawn); undefined runs as this process's user. */
  readonly user?: NativeRunUser;
  /** Limits; undefined spawns the program directly. */
  readonly limits?: NativeLimits;
  /** Size of each of the stdout and stderr ring buffers (default 64 KiB). */
  readonly bufferBytes?: number;
  readonly stdoutLog?: RotatingLog;
  readonly stderrLog?: RotatingLog;
  /** Interleaved line tail shared across runs of an instance. */
  readonly lines?: LineTail;
  /**
   * The instance's output FIFOs: when set, the program writes into them (and holds a read end of its
   * own) instead of anonymous pipes, so it survives a crash of the host (see `ensureOutputFifos`).
   */
  readonly fifos?: NativeFifos;
}

/**
 * The `sh` program of the limits wrapper: `$1` address space in KiB (0: leave), `$2` open files
 * (0: leave), `$3` CPU seconds (soft RLIMIT_CPU; 0: leave), then the program and its arguments, `exec`ed so that the pid (and process group) stays
 * the program's. Arguments are positional parameters, never parsed by the shell.
 */
export const NATIVE_LIMITS_SCRIPT: string = [
  'ulimit -c 0 2>/dev/null',
  'if [ "$1" != 0 ]; then ulimit -v "$1" || { echo "heddle: cannot set the address-space limit" >&2; exit 125; }; fi',
  'if [ "$2" != 0 ]; then ulimit -n "$2" 2>/dev/null; fi',
  'if [ "$3" != 0 ]; then ulimit -S -t "$3" || { echo "heddle: cannot set the CPU time limit" >&2; exit 125; }; fi',
  'shift 3',
  'exec "$@"',
].join('\n');

const CLOSE_WAIT_MS = 2000;

/**
 * One run of a native program: spawned detached (it leads its own process group), stdout and stderr
 * captured into bounded ring buffers, rotated log files and the instance's line tail. With `fifos`
 * its output goes through the instance's named pipes, of which it holds a read end itself: it never
 * gets SIGPIPE when the host dies, and a restarted host reads on (`reattachNativeOutput`). {@link done}
 * resolves with the evidence once the program has exited (its group is then SIGKILLed so nothing it
 * started outlives it) and its output is drained.
 */
export class NativeRun {
  readonly spec: NativeSpawnSpec;
  readonly child: ChildProcess;
  readonly startedAtMs: number;
  /** Resolves with the run's evidence when it has ended; never rejects. */
  readonly done: Promise<RunEvidence>;
  readonly #stdout: OutputBuffer;
  readonly #stderr: OutputBuffer;
  readonly #notes: string[] = [];
  #killed = false;
  #stopping: Promise<RunEvidence> | undefined;
  #exit: { code: number | null; signal: string | null; at: number } | undefined;
  #readers: readonly FifoReader[] = [];

  /** Spawns the program now. */
  constructor(spec: NativeSpawnSpec) {
    this.spec = spec;
    this.#stdout = new OutputBuffer(spec.bufferBytes ?? DEFAULT_OUTPUT_BUFFER_BYTES);
    this.#stderr = new OutputBuffer(spec.bufferBytes ?? DEFAULT_OUTPUT_BUFFER_BYTES);
    const [file, argv] =
      spec.limits === undefined
        ? [spec.executable, [...spec.args]]
        : [
            '/bin/sh',
            [
              '-c',
              NATIVE_LIMITS_SCRIPT,
              'heddle-limits',
              String(Math.floor(spec.limits.addressSpaceBytes / 1024)),
              String(spec.limits.openFiles),
              String(spec.limits.cpuSeconds),
              spec.executable,
              ...spec.args,
            ],
          ];
    const fds = this.#openFifos();
    this.startedAtMs = Date.now();
    try {
      this.child = spawn(file, argv, {
        cwd: spec.cwd,
        env: { ...spec.env },
        detached: true,
        stdio:
          fds === undefined
            ? ['ignore', 'pipe', 'pipe']
            : ['ignore', fds.stdout.write, fds.stderr.write, fds.stdout.keep, fds.stderr.keep],
        ...(spec.user === undefined ? {} : { uid: spec.user.uid, gid: spec.user.gid }),
      });
    } catch (err) {
      for (const r of this.#readers) r.destroy();
      throw err;
    } finally {
      // The child has its own copies.
      if (fds !== undefined) for (const f of [fds.stdout, fds.stderr]) closeFds(f.write, f.keep);
    }
    if (fds === undefined) {
      this.#capture('stdout', this.#stdout, spec.stdoutLog, '');
      this.#capture('stderr', this.#stderr, spec.stderrLog, 'stderr: ');
    }
    this.done = this.#wait();
  }

  /** The process id (undefined when the spawn failed). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** True until the program has exited. */
  get running(): boolean {
    return this.#exit === undefined && this.child.pid !== undefined && this.child.exitCode === null;
  }

  /**
   * SIGTERM to the group, `graceMs` to exit, then SIGKILL to the group. Resolves with the evidence
   * (`killed` true when SIGKILL was needed). Calling it again returns the same promise.
   */
  stop(graceMs: number): Promise<RunEvidence> {
    if (this.#stopping !== undefined) return this.#stopping;
    const pid = this.child.pid;
    if (pid === undefined || !this.running) {
      this.#stopping = this.done;
      return this.done;
    }
    this.#stopping = terminateProcessGroup(pid, childExited(this.child), graceMs).then(async (r) => {
      this.#killed = r.killed;
      if (r.killed) this.#notes.push(`did not exit within ${graceMs} ms of SIGTERM; SIGKILL sent`);
      await this.done;
      return this.evidence();
    });
    return this.#stopping;
  }

  /** The evidence so far (final once {@link done} has resolved). */
  evidence(): RunEvidence {
    return {
      instanceId: this.spec.instanceId,
      args: [this.spec.executable, ...this.spec.args],
      exitCode: this.#exit?.code ?? null,
      signal: this.#exit?.signal ?? null,
      startedAtMs: this.child.pid === undefined ? null : this.startedAtMs,
      endedAtMs: this.#exit?.at ?? null,
      killed: this.#killed,
      stdout: this.#stdout.text(),
      stdoutTruncatedBytes: this.#stdout.truncatedBytes,
      stderr: this.#stderr.text(),
      stderrTruncatedBytes: this.#stderr.truncatedBytes,
      notes: [...this.#notes],
    };
  }

  /**
   * With `spec.fifos`: opens the host's readers (feeding the buffers, logs and line tail) and the
   * child's descriptors. Undefined (anonymous pipes) without FIFOs or when they cannot be opened.
   */
  #openFifos():
    | { readonly stdout: { write: number; keep: number }; readonly stderr: { write: number; keep: number } }
    | undefined {
    const fifos = this.spec.fifos;
    if (fifos === undefined) return undefined;
    const readers: FifoReader[] = [];
    const opened: { write: number; keep: number }[] = [];
    try {
      readers.push(new FifoReader(fifos.stdout, this.#sink('stdout', this.#stdout, this.spec.stdoutLog, '')));
      readers.push(
        new FifoReader(fifos.stderr, this.#sink('stderr', this.#stderr, this.spec.stderrLog, 'stderr: ')),
      );
      const stdout = openForChild(fifos.stdout);
      opened.push(stdout);
      const stderr = openForChild(fifos.stderr);
      opened.push(stderr);
      this.#readers = readers;
      return { stdout, stderr };
    } catch (err) {
      for (const r of readers) r.destroy();
      for (const f of opened) closeFds(f.write, f.keep);
      this.#notes.push(`output FIFOs unusable (${messageOf(err)}): output through pipes`);
      return undefined;
    }
  }

  #capture(name: 'stdout' | 'stderr', buf: OutputBuffer, log: RotatingLog | undefined, prefix: string): void {
    const stream = this.child[name];
    if (stream === null) return;
    stream.on('data', this.#sink(name, buf, log, prefix));
    stream.on('error', () => {});
  }

  /** What is done with each chunk of a stream: ring buffer, log file, line tail. */
  #sink(
    name: 'stdout' | 'stderr',
    buf: OutputBuffer,
    log: RotatingLog | undefined,
    prefix: string,
  ): (chunk: Buffer) => void {
    const decoder = new StringDecoder('utf8');
    return (chunk: Buffer) => {
      buf.push(chunk);
      try {
        log?.write(chunk);
      } catch (err) {
        if (!this.#notes.some((n) => n.startsWith(`${name} log`))) {
          this.#notes.push(`${name} log write failed: ${messageOf(err)}`);
        }
      }
      this.spec.lines?.push(name, decoder.write(chunk), prefix);
    };
  }

  async #wait(): Promise<RunEvidence> {
    const child = this.child;
    const spawnError = await new Promise<Error | undefined>((resolve) => {
      child.once('spawn', () => resolve(undefined));
      child.once('error', (err) => resolve(err));
    });
    if (spawnError !== undefined) {
      for (const r of this.#readers) r.destroy();
      this.#notes.push(`spawn failed: ${spawnError.message}`);
      this.#exit = { code: null, signal: null, at: Date.now() };
      return this.evidence();
    }
    const readers = this.#readers;
    const closed =
      readers.length > 0
        ? Promise.all(readers.map((r) => r.ended)).then(() => undefined)
        : new Promise<void>((resolve) => child.once('close', () => resolve()));
    await childExited(child);
    this.#exit = { code: child.exitCode, signal: child.signalCode, at: Date.now() };
    // Nothing the program started may outlive it: whatever is left in its group is killed.
    if (child.pid !== undefined) killProcessGroup(child.pid, 'SIGKILL');
    const timer = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), CLOSE_WAIT_MS).unref());
    if ((await Promise.race([closed, timer])) === 'timeout') {
      // A descendant that left the group still holds the pipes: stop reading them.
      child.stdout?.destroy();
      child.stderr?.destroy();
      for (const r of readers) r.destroy();
      this.#notes.push('output pipes still held open by a process outside the group; stopped reading');
    }
    this.spec.lines?.flush({ stderr: 'stderr: ' });
    if (
      this.#exit.code === 125 &&
      this.#stderr.text().includes('heddle: cannot set the address-space limit')
    ) {
      this.#notes.push('address-space limit could not be applied; the program did not run');
    }
    if (this.#exit.signal === 'SIGXCPU' && this.spec.limits !== undefined) {
      this.#notes.push(
        `cpu time limit exceeded: the run used ${this.spec.limits.cpuSeconds} s of CPU and was ended (SIGXCPU)`,
      );
    }
    if (this.#exit.signal === 'SIGKILL' && !this.#killed && this.#stopping === undefined) {
      this.#notes.push('killed by SIGKILL not sent by the adapter (for example the kernel OOM killer)');
    }
    return this.evidence();
  }
}

function closeFds(...fds: number[]): void {
  for (const fd of fds) {
    try {
      closeSync(fd);
    } catch {
      // already closed
    }
  }
}
