import { spawn } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { basename, delimiter, join } from 'node:path';
import { RuntimeError } from '../errors.js';
import { isJsonObject } from './container-inspect.js';

/** Which engine a CLI binary is: `docker` or `podman` (a binary named otherwise counts as `docker`). */
export type ContainerEngineKind = 'docker' | 'podman';

/** A container engine CLI the adapter drives. */
export interface ContainerEngine {
  /** Absolute path (or name) of the CLI binary. */
  readonly bin: string;
  readonly kind: ContainerEngineKind;
  /** Extra environment for the CLI process (merged over this process's environment). */
  readonly env: Readonly<Record<string, string>>;
}

/** What one CLI call returned. Output is bounded; `*Truncated` counts bytes dropped from the front. */
export interface EngineResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly stdoutTruncated: number;
  readonly stderrTruncated: number;
  /** True when the call was killed for running past its timeout. */
  readonly timedOut: boolean;
}

/** Options of one CLI call. */
export interface EngineCallOptions {
  /** Kill the CLI after this many ms (default 30 s). */
  readonly timeoutMs?: number;
  /** Keep at most this many bytes of each stream, the tail (default 1 MiB). */
  readonly maxBytes?: number;
  /** Extra environment for this call only (for example a secret passed as `-e NAME`). */
  readonly env?: Readonly<Record<string, string>>;
}

/** A bounded tail buffer: keeps the last `max` bytes and counts what it dropped. */
class Tail {
  private chunks: Buffer[] = [];
  private size = 0;
  dropped = 0;
  constructor(private readonly max: number) {}
  push(b: Buffer): void {
    this.chunks.push(b);
    this.size += b.length;
    if (this.size > this.max * 2) this.trim();
  }
  private trim(): void {
    const all = Buffer.concat(this.chunks);
    const cut = Math.max(0, all.length - this.max);
    this.dropped += cut;
    this.chunks = [all.subarray(cut)];
    this.size = all.length - cut;
  }
  text(): string {
    this.trim();
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

/** Runs the engine CLI with `args` (no shell) and resolves with its bounded output; never rejects on exit codes. */
export function runEngine(
  engine: ContainerEngine,
  args: readonly string[],
  options: EngineCallOptions = {},
): Promise<EngineResult> {
  const maxBytes = options.maxBytes ?? 1024 * 1024;
  return new Promise((resolve, reject) => {
    const child = spawn(engine.bin, [...args], {
      env: { ...process.env, ...engine.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out = new Tail(maxBytes);
    const err = new Tail(maxBytes);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, options.timeoutMs ?? 30_000);
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', (cause) => {
      clearTimeout(timer);
      reject(new RuntimeError('runtime', `${engine.bin} ${args[0] ?? ''}: ${cause.message}`, { cause }));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({
        code,
        stdout: out.text(),
        stderr: err.text(),
        stdoutTruncated: out.dropped,
        stderrTruncated: err.dropped,
        timedOut,
      });
    });
  });
}

/** Runs a CLI call and throws `runtime` (naming the subcommand and the engine's message) unless it exits 0. */
export async function runEngineOk(
  engine: ContainerEngine,
  args: readonly string[],
  options: EngineCallOptions = {},
): Promise<EngineResult> {
  const r = await runEngine(engine, args, options);
  if (r.code !== 0) {
    const why = r.timedOut ? 'timed out' : r.stderr.trim().split('\n').slice(-1)[0] || `exit ${r.code}`;
    throw new RuntimeError('runtime', `${engine.kind} ${args[0] ?? ''}: ${why}`, {
      field: args[0] ?? 'engine',
    });
  }
  return r;
}

/** The engine kind of a CLI path, from its file name. */
export function engineKindOf(bin: string): ContainerEngineKind {
  return basename(bin).includes('podman') ? 'podman' : 'docker';
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Finds `docker`, then `podman`, on `PATH` (`pathEnv`); undefined when neither is there. */
export function findEngineOnPath(pathEnv: string | undefined = process.env.PATH): string | undefined {
  for (const name of ['docker', 'podman']) {
    for (const dir of (pathEnv ?? '').split(delimiter)) {
      if (dir === '') continue;
      const p = join(dir, name);
      if (existsSync(p) && executable(p)) return p;
    }
  }
  return undefined;
}

/** Maps an engine/OCI architecture name (`amd64`, `arm64`, `arm`, `riscv64`) to a cog arch. */
export function cogArchOfOci(arch: string): string | undefined {
  const a = arch.includes('/') ? (arch.split('/')[1] ?? '') : arch;
  switch (a) {
    case 'amd64':
    case 'x86_64':
      return 'x86_64';
    case 'arm64':
    case 'aarch64':
      return 'aarch64';
    case 'arm':
    case 'armv7':
    case 'armhf':
      return 'armv7';
    case 'riscv64':
      return 'riscv64';
    default:
      return undefined;
  }
}

/** What `version --format json` told about the engine's server side. */
export interface EngineVersion {
  /** Server version string. */
  readonly version: string;
  /** The server's architecture as a cog arch (`x86_64`). */
  readonly arch: string;
}

/**
 * Parses `docker version --format json` (`Server.Version`, `Server.Arch`) or `podman version --format
 * json` (`Server.Version`, `Server.OsArch` such as `linux/amd64`; podman without a service reports the
 * same under `Client`). Undefined when no server answered (docker prints `"Server": null`).
 */
export function parseEngineVersion(kind: ContainerEngineKind, text: string): EngineVersion | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isJsonObject(json)) return undefined;
  let s = json.Server;
  if ((s === null || s === undefined) && kind === 'podman') s = json.Client;
  if (!isJsonObject(s)) return undefined;
  const version = typeof s.Version === 'string' ? s.Version : '';
  const rawArch = typeof s.Arch === 'string' ? s.Arch : typeof s.OsArch === 'string' ? s.OsArch : '';
  const arch = cogArchOfOci(rawArch);
  if (version === '' || arch === undefined) return undefined;
  return { version, arch };
}

/** binfmt_misc handler names (qemu-user-static) to the cog arch they emulate. */
const BINFMT_HANDLERS: Readonly<Record<string, string>> = {
  'qemu-aarch64': 'aarch64',
  'qemu-x86_64': 'x86_64',
  'qemu-arm': 'armv7',
  'qemu-riscv64': 'riscv64',
};

/**
 * The arches the engine can run under emulation, detected from the kernel's binfmt_misc handlers
 * (`/proc/sys/fs/binfmt_misc/qemu-<arch>`, as registered by qemu-user-static or `tonistiigi/binfmt`).
 * The native arch is never listed.
 */
export function detectEmulatedArches(nativeArch: string, binfmtDir = '/proc/sys/fs/binfmt_misc'): string[] {
  const out: string[] = [];
  for (const [handler, arch] of Object.entries(BINFMT_HANDLERS)) {
    if (arch !== nativeArch && existsSync(join(binfmtDir, handler))) out.push(arch);
  }
  return out.sort();
}
