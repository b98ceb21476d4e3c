import { readFileSync } from 'node:fs';
import * as os from 'node:os';
import { type Capability, normaliseArch } from '@heddle/placement';

/**
 * What {@link probeSystem} reads, injectable for tests. Every field defaults to this machine
 * (`node:os`, and the cgroup v2 files under `/sys/fs/cgroup` on Linux).
 */
export interface SystemFacts {
  /** `process.arch` style (`x64`, `arm64`, `arm`, `riscv64`, ...). */
  readonly arch?: string;
  /** `process.platform` style (`linux`, `darwin`, ...). */
  readonly platform?: string;
  /** Kernel release (`os.release()`). */
  readonly release?: string;
  /** CPUs this process may use (`os.availableParallelism()`). */
  readonly cpus?: number;
  /** CPU model name, when known. */
  readonly cpuModel?: string;
  /** Physical memory in bytes (`os.totalmem()`). */
  readonly totalMemBytes?: number;
  /** ARM version of a 32-bit ARM build (`process.config.variables.arm_version`): 6 or 7. */
  readonly armVersion?: number;
  /**
   * Reads a file (`/proc/self/cgroup`, cgroup v1 and v2 limit files under `/sys/fs/cgroup`);
   * undefined when it cannot be read. Only used on Linux.
   */
  readonly readFile?: (path: string) => string | undefined;
}

const ARCH_IDS: Readonly<Record<string, string>> = {
  ia32: 'i686',
  ppc64: 'ppc64le',
  loong64: 'loongarch64',
};

const OS_IDS: Readonly<Record<string, string>> = { darwin: 'macos', win32: 'windows' };

const MIB = 1024 * 1024;

/**
 * The node-facts capabilities of this machine, probed (provenance `probed`), in the vocabulary of
 * `@heddle/placement` (docs/placement.md):
 *
 * - `cpu.arch.<arch>` (`x86_64`, `aarch64`, `armv7`, `riscv64`, ...) with `cores`: the CPUs this
 *   process may use, lowered to a cgroup v2 `cpu.max` quota when one is set, and `model` when known;
 * - `os.<os>` (`os.linux`, `os.macos`; other systems by their Node platform name) with `release`;
 * - `mem.system` with `size_mb`: physical memory, lowered to a cgroup v2 `memory.max` when one is set
 *   (`limited_by: "cgroup"`);
 * - `mem.unified` on Apple silicon (accelerators share system memory), with the same `size_mb`.
 *
 * Runtime capabilities (`runtime.native`, ...) come from each adapter's `provides()`, not from here.
 */
export function probeSystem(facts: SystemFacts = {}): Capability[] {
  const platform = facts.platform ?? process.platform;
  const rawArch = facts.arch ?? process.arch;
  const limits = platform === 'linux' ? cgroupLimits(facts.readFile ?? readTextFile) : {};
  const arch = archId(rawArch, facts.armVersion ?? defaultArmVersion());

  const cpuAttrs: Record<string, string | number> = {
    cores: cores(facts.cpus ?? os.availableParallelism(), limits.cpus),
  };
  const model = (facts.cpuModel ?? os.cpus()[0]?.model ?? '')
    .replace(/[^\x20-\x7e]/g, '')
    .trim()
    .slice(0, 256);
  if (model !== '') cpuAttrs.model = model;

  const memAttrs: Record<string, string | number> = {};
  const physicalMb = Math.floor((facts.totalMemBytes ?? os.totalmem()) / MIB);
  const limitMb = limits.memoryBytes === undefined ? undefined : Math.floor(limits.memoryBytes / MIB);
  memAttrs.size_mb = limitMb !== undefined && limitMb < physicalMb ? limitMb : physicalMb;
  if (limitMb !== undefined && limitMb < physicalMb) memAttrs.limited_by = 'cgroup';

  const osId = OS_IDS[platform] ?? platform.toLowerCase().replace(/[^a-z0-9_-]/g, '');
  const caps: Capability[] = [
    probed(`cpu.arch.${arch}`, cpuAttrs),
    probed(`os.${osId || 'unknown'}`, { release: (facts.release ?? os.release()).slice(0, 256) }),
    probed('mem.system', memAttrs),
  ];
  if (platform === 'darwin' && arch === 'aarch64')
    caps.push(probed('mem.unified', { size_mb: memAttrs.size_mb }));
  return caps;
}

function probed(id: string, attrs: Record<string, string | number>): Capability {
  return { id, attrs, provenance: 'probed', state: 'available', exclusive: false };
}

/** The capability id segment of an architecture: placement's names (`x64` -> `x86_64`, `arm64` -> `aarch64`). */
function archId(arch: string, armVersion: number | undefined): string {
  if (arch === 'arm') return armVersion !== undefined && armVersion < 7 ? `armv${armVersion}` : 'armv7';
  const a = normaliseArch(arch);
  return (ARCH_IDS[a] ?? a).replace(/[^a-z0-9_-]/g, '') || 'unknown';
}

function defaultArmVersion(): number | undefined {
  // Node's own build variables; `arm_version` is set only on 32-bit ARM builds (not in their type).
  const v: unknown = Reflect.get(process.config.variables, 'arm_version');
  const n = typeof v === 'string' ? Number.parseInt(v, 10) : typeof v === 'number' ? v : Number.NaN;
  return Number.isInteger(n) ? n : undefined;
}

/** CPUs (at least 1), lowered to a cgroup CPU quota (rounded up) when there is one. */
function cores(cpus: number, quota: number | undefined): number {
  const n = Math.max(1, Math.floor(cpus));
  return quota === undefined ? n : Math.max(1, Math.min(n, Math.ceil(quota)));
}

/** Limits the cgroup of this process sets: CPUs (quota / period) and memory bytes. */
interface CgroupLimits {
  readonly cpus?: number;
  readonly memoryBytes?: number;
}

/**
 * The CPU quota and memory limit of this process's cgroup, v2 (`cpu.max`, `memory.max`) or v1
 * (`cpu.cfs_quota_us` / `cpu.cfs_period_us`, `memory.limit_in_bytes`), read in the process's own
 * cgroup directory (from `/proc/self/cgroup`) and then at the mount's root (a container's namespace).
 */
function cgroupLimits(read: (path: string) => string | undefined): CgroupLimits {
  const own = new Map<string, string>(); // controller ('' for v2) -> cgroup path
  for (const line of (read('/proc/self/cgroup') ?? '').split('\n')) {
    const m = /^[0-9]+:([^:]*):(\/.*)$/.exec(line.trim());
    if (m === null) continue;
    const [, controllers = '', path = '/'] = m;
    for (const c of controllers.split(',')) own.set(c, path === '/' ? '' : path);
  }
  const file = (mounts: readonly string[], controller: string, name: string): string | undefined => {
    const rel = own.get(controller) ?? '';
    for (const mount of mounts) {
      for (const dir of rel === '' ? [mount] : [`${mount}${rel}`, mount]) {
        const text = read(`${dir}/${name}`);
        if (text !== undefined) return text.trim();
      }
    }
    return undefined;
  };
  const out: { cpus?: number; memoryBytes?: number } = {};
  const v1Cpu = ['/sys/fs/cgroup/cpu', '/sys/fs/cgroup/cpu,cpuacct'];
  const cpuMax = file(['/sys/fs/cgroup'], '', 'cpu.max')?.split(/\s+/);
  const quota = Number(cpuMax ? cpuMax[0] : file(v1Cpu, 'cpu', 'cpu.cfs_quota_us'));
  const period = Number(cpuMax ? cpuMax[1] : file(v1Cpu, 'cpu', 'cpu.cfs_period_us'));
  if (quota > 0 && period > 0) out.cpus = quota / period;
  const mem =
    file(['/sys/fs/cgroup'], '', 'memory.max') ??
    file(['/sys/fs/cgroup/memory'], 'memory', 'memory.limit_in_bytes');
  if (mem !== undefined && /^[0-9]{1,19}$/.test(mem)) out.memoryBytes = Number(mem);
  return out;
}

function readTextFile(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}
