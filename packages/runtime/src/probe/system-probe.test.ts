import * as os from 'node:os';
import { parseCapabilities } from '@heddle/placement';
import { describe, expect, it } from 'vitest';
import { probeSystem } from './system-probe.js';

const files =
  (map: Record<string, string>) =>
  (path: string): string | undefined =>
    map[path];

describe('probeSystem', () => {
  it('describes this machine in the placement vocabulary, probed', () => {
    const caps = probeSystem();
    expect(parseCapabilities(caps)).toEqual(caps); // valid capabilities, nothing defaulted
    const names: Readonly<Record<string, string>> = { x64: 'x86_64', arm64: 'aarch64' };
    const arch = names[process.arch] ?? process.arch;
    const cpu = caps.find((c) => c.id.startsWith('cpu.arch.'));
    expect(cpu?.id).toBe(`cpu.arch.${arch}`);
    expect(cpu?.attrs.cores).toBeGreaterThanOrEqual(1);
    expect(cpu?.attrs.cores).toBeLessThanOrEqual(os.availableParallelism());
    const osCap = caps.find((c) => c.id.startsWith('os.'));
    expect(osCap?.id).toBe(process.platform === 'darwin' ? 'os.macos' : `os.${process.platform}`);
    expect(osCap?.attrs.release).toBe(os.release());
    const mem = caps.find((c) => c.id === 'mem.system');
    expect(mem?.attrs.size_mb).toBeGreaterThan(0);
    expect(mem?.attrs.size_mb).toBeLessThanOrEqual(Math.floor(os.totalmem() / 2 ** 20));
    expect(caps.every((c) => c.provenance === 'probed' && c.state === 'available' && !c.exclusive)).toBe(
      true,
    );
  });

  it('names architectures as placement does', () => {
    const id = (arch: string, armVersion?: number) =>
      probeSystem({
        arch,
        platform: 'linux',
        cpus: 1,
        totalMemBytes: 2 ** 30,
        release: '6',
        readFile: files({}),
        ...(armVersion === undefined ? {} : { armVersion }),
      })[0]?.id;
    expect(id('x64')).toBe('cpu.arch.x86_64');
    expect(id('arm64')).toBe('cpu.arch.aarch64');
    expect(id('arm', 7)).toBe('cpu.arch.armv7');
    expect(id('arm', 6)).toBe('cpu.arch.armv6');
    expect(id('riscv64')).toBe('cpu.arch.riscv64');
    expect(id('ppc64')).toBe('cpu.arch.ppc64le');
  });

  it('reports unified memory on Apple silicon only, and macOS as os.macos', () => {
    const mac = probeSystem({
      arch: 'arm64',
      platform: 'darwin',
      cpus: 10,
      totalMemBytes: 32 * 2 ** 30,
      release: '24.1.0',
    });
    expect(mac.map((c) => c.id)).toEqual(['cpu.arch.aarch64', 'os.macos', 'mem.system', 'mem.unified']);
    expect(mac[2]?.attrs).toEqual({ size_mb: 32768 });
    expect(mac[3]?.attrs).toEqual({ size_mb: 32768 });
    const intelMac = probeSystem({
      arch: 'x64',
      platform: 'darwin',
      cpus: 4,
      totalMemBytes: 2 ** 33,
      release: '23.0.0',
    });
    expect(intelMac.map((c) => c.id)).not.toContain('mem.unified');
  });

  it('lowers cores and memory to a cgroup v2 limit', () => {
    const caps = probeSystem({
      arch: 'x64',
      platform: 'linux',
      cpus: 16,
      totalMemBytes: 64 * 2 ** 30,
      release: '6.1.0',
      cpuModel: 'Test CPU\u0000 @ 3 GHz',
      readFile: files({
        '/proc/self/cgroup': '0::/kubepods/pod1\n',
        '/sys/fs/cgroup/kubepods/pod1/cpu.max': '150000 100000\n',
        '/sys/fs/cgroup/kubepods/pod1/memory.max': `${512 * 2 ** 20}\n`,
      }),
    });
    expect(caps[0]?.attrs).toEqual({ cores: 2, model: 'Test CPU @ 3 GHz' });
    expect(caps[2]?.attrs).toEqual({ size_mb: 512, limited_by: 'cgroup' });
  });

  it('reads cgroup v1 limits and ignores "no limit" values', () => {
    const v1 = probeSystem({
      arch: 'x64',
      platform: 'linux',
      cpus: 8,
      totalMemBytes: 8 * 2 ** 30,
      release: '5.15',
      readFile: files({
        '/proc/self/cgroup': '4:memory:/docker/abc\n2:cpu,cpuacct:/docker/abc\n',
        '/sys/fs/cgroup/cpu/docker/abc/cpu.cfs_quota_us': '400000',
        '/sys/fs/cgroup/cpu/docker/abc/cpu.cfs_period_us': '100000',
        '/sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes': '1073741824',
      }),
    });
    expect(v1[0]?.attrs.cores).toBe(4);
    expect(v1[2]?.attrs).toEqual({ size_mb: 1024, limited_by: 'cgroup' });
    const unlimited = probeSystem({
      arch: 'x64',
      platform: 'linux',
      cpus: 8,
      totalMemBytes: 8 * 2 ** 30,
      release: '5.15',
      readFile: files({
        '/proc/self/cgroup': '0::/\n',
        '/sys/fs/cgroup/cpu.max': 'max 100000',
        '/sys/fs/cgroup/memory.max': 'max',
      }),
    });
    expect(unlimited[0]?.attrs.cores).toBe(8);
    expect(unlimited[2]?.attrs).toEqual({ size_mb: 8192 });
  });
});
