// The system commands the namespace harness drives (iproute2's `ip`, nftables' `nft`), run without a
// shell, and the check of whether this machine can create network namespaces at all.
import { execFile, execFileSync } from 'node:child_process';
import { HeddleError } from '@heddle/envelope';

/** A command that failed: what ran, its exit code and what it wrote to standard error. */
export class SysCommandError extends HeddleError {
  readonly argv: readonly string[];
  readonly stderr: string;
  constructor(argv: readonly string[], stderr: string) {
    super('sys_command_failed', `${argv.join(' ')} failed: ${stderr.trim() || 'no message'}`);
    this.argv = argv;
    this.stderr = stderr;
  }
}

/** Runs `argv` (no shell); resolves with its standard output, rejects with {@link SysCommandError}. */
export function sh(argv: readonly string[], input?: string): Promise<string> {
  const [cmd, ...args] = argv;
  if (cmd === undefined) return Promise.reject(new TypeError('sh: empty argv'));
  return new Promise((resolve, reject) => {
    const child = execFile(cmd, args, { encoding: 'utf8', timeout: 30_000 }, (err, stdout, stderr) => {
      if (err) reject(new SysCommandError(argv, `${stderr}${stderr ? '' : err.message}`));
      else resolve(stdout);
    });
    if (input !== undefined) child.stdin?.end(input);
  });
}

/** The same, synchronously (for cleanup in an `exit` handler); returns undefined on failure. */
export function shSync(argv: readonly string[]): string | undefined {
  const [cmd, ...args] = argv;
  if (cmd === undefined) return undefined;
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', timeout: 15_000, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch {
    return undefined;
  }
}

/** Runs `argv` inside network namespace `ns`. */
export function inNs(ns: string, argv: readonly string[], input?: string): Promise<string> {
  return sh(['ip', 'netns', 'exec', ns, ...argv], input);
}

/** Whether the harness can run here, and why not. */
export interface NetnsSupport {
  readonly ok: boolean;
  /** Why not (empty when ok). */
  readonly reason: string;
}

let cached: NetnsSupport | undefined;

/**
 * Whether network namespaces, veth pairs, a bridge and nftables can be used here: root, `ip` and
 * `nft` installed, and a probe namespace that can be made and removed. Cached for the process.
 */
export function netnsSupport(): NetnsSupport {
  if (cached !== undefined) return cached;
  const no = (reason: string): NetnsSupport => {
    cached = { ok: false, reason };
    return cached;
  };
  if (process.platform !== 'linux') return no(`network namespaces need Linux (this is ${process.platform})`);
  if (process.getuid?.() !== 0) return no('network namespaces need root (this process is not uid 0)');
  if (shSync(['ip', '-V']) === undefined) return no('iproute2 (`ip`) is not installed');
  if (shSync(['nft', '--version']) === undefined)
    return no('nftables (`nft`) is not installed (apt-get install nftables)');
  const probe = `hdl-probe-${process.pid}`;
  if (shSync(['ip', 'netns', 'add', probe]) === undefined)
    return no('`ip netns add` failed (no CAP_SYS_ADMIN, or namespaces are disabled)');
  const nft = shSync(['ip', 'netns', 'exec', probe, 'nft', 'add', 'table', 'inet', 'probe']);
  shSync(['ip', 'netns', 'del', probe]);
  if (nft === undefined) return no('nftables does not work in a namespace (no nf_tables in the kernel?)');
  cached = { ok: true, reason: '' };
  return cached;
}

/**
 * For tests: undefined when the harness can run; otherwise the message to skip with. In CI
 * (`CI=true`) a machine that cannot run it is a failure, so this throws there.
 */
export function netnsSkipReason(
  env: NodeJS.ProcessEnv = process.env,
  s: NetnsSupport = netnsSupport(),
): string | undefined {
  if (s.ok) return undefined;
  if (env.CI === 'true' || env.CI === '1')
    throw new Error(`the network-namespace fault harness must run in CI, but cannot: ${s.reason}`);
  return `skipped: the network-namespace fault harness cannot run here: ${s.reason}`;
}
