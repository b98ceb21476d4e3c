import { closeSync, openSync, readSync } from 'node:fs';
import type { CogArch } from '@heddle/package';

/** ELF e_machine values this module knows. */
export const ELF_MACHINES: Readonly<Record<number, string>> = {
  3: 'x86',
  40: 'arm',
  62: 'x86_64',
  183: 'aarch64',
  243: 'riscv',
};

/** What the first bytes of an executable say it is. */
export type ExecutableHeader =
  | {
      readonly format: 'elf';
      /** 32 or 64 (EI_CLASS). */
      readonly bits: 32 | 64;
      /** e_machine. */
      readonly machine: number;
      /** The cog arch this header runs as, when it is one of them. */
      readonly arch: CogArch | undefined;
    }
  | {
      readonly format: 'macho';
      readonly bits: 32 | 64;
      /** cputype values (one, or several for a universal binary). */
      readonly cpuTypes: readonly number[];
      /** The cog arches it contains. */
      readonly arches: readonly CogArch[];
    }
  | {
      readonly format: 'script';
      /** The interpreter path of the `#!` line. */
      readonly interpreter: string;
      /** At most one argument after the interpreter, as the kernel passes it. */
      readonly interpreterArg: string | undefined;
    }
  | { readonly format: 'unknown' };

/** The cog arch of this host's CPU (`process.arch`), or undefined when it is not one of the cog arches. */
export function hostCogArch(arch: string = process.arch): CogArch | undefined {
  switch (arch) {
    case 'x64':
      return 'x86_64';
    case 'arm64':
      return 'aarch64';
    case 'arm':
      return 'armv7';
    case 'riscv64':
      return 'riscv64';
    default:
      return undefined;
  }
}

function elfArch(bits: 32 | 64, machine: number): CogArch | undefined {
  if (bits === 64 && machine === 62) return 'x86_64';
  if (bits === 64 && machine === 183) return 'aarch64';
  if (bits === 32 && machine === 40) return 'armv7';
  if (bits === 64 && machine === 243) return 'riscv64';
  return undefined;
}

const CPU_TYPE_X86_64 = 0x01000007;
const CPU_TYPE_ARM64 = 0x0100000c;
const CPU_TYPE_ARM = 12;

function machoArch(cpuType: number): CogArch | undefined {
  if (cpuType === CPU_TYPE_X86_64) return 'x86_64';
  if (cpuType === CPU_TYPE_ARM64) return 'aarch64';
  if (cpuType === CPU_TYPE_ARM) return 'armv7';
  return undefined;
}

/** Parses the header bytes of an executable (the first 4 KiB are plenty). */
export function parseExecutableHeader(bytes: Uint8Array): ExecutableHeader {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.length >= 20 && b[0] === 0x7f && b[1] === 0x45 && b[2] === 0x4c && b[3] === 0x46) {
    const cls = b[4];
    const data = b[5];
    if ((cls !== 1 && cls !== 2) || (data !== 1 && data !== 2)) return { format: 'unknown' };
    const bits = cls === 1 ? 32 : 64;
    const machine = data === 1 ? b.readUInt16LE(18) : b.readUInt16BE(18);
    return { format: 'elf', bits, machine, arch: elfArch(bits, machine) };
  }
  if (b.length >= 8) {
    const magicBE = b.readUInt32BE(0);
    // Thin Mach-O in either byte order.
    const thin: Record<number, { bits: 32 | 64; le: boolean }> = {
      4277009102: { bits: 32, le: false },
      4277009103: { bits: 64, le: false },
      3472551422: { bits: 32, le: true },
      3489328638: { bits: 64, le: true },
    };
    const t = thin[magicBE];
    if (t !== undefined) {
      const cpu = t.le ? b.readUInt32LE(4) : b.readUInt32BE(4);
      const arch = machoArch(cpu);
      return { format: 'macho', bits: t.bits, cpuTypes: [cpu], arches: arch === undefined ? [] : [arch] };
    }
    // Universal (fat) binary: big-endian header, nfat_arch entries of 20 bytes (or 32 for fat64).
    if (magicBE === 0xcafebabe || magicBE === 0xcafebabf) {
      const n = b.readUInt32BE(4);
      const entry = magicBE === 0xcafebabe ? 20 : 32;
      // Java class files share 0xcafebabe; their "count" (the version) is large.
      if (n === 0 || n > 16 || 8 + n * entry > b.length) return { format: 'unknown' };
      const cpuTypes: number[] = [];
      for (let i = 0; i < n; i++) cpuTypes.push(b.readUInt32BE(8 + i * entry));
      const arches = [...new Set(cpuTypes.map(machoArch).filter((a): a is CogArch => a !== undefined))];
      return { format: 'macho', bits: 64, cpuTypes, arches };
    }
  }
  if (b.length >= 2 && b[0] === 0x23 && b[1] === 0x21) {
    const end = b.indexOf(0x0a);
    const line = b
      .subarray(2, end < 0 ? b.length : end)
      .toString('utf8')
      .trim();
    const space = line.search(/[ \t]/);
    const interpreter = space < 0 ? line : line.slice(0, space);
    const rest = space < 0 ? '' : line.slice(space).trim();
    return { format: 'script', interpreter, interpreterArg: rest === '' ? undefined : rest };
  }
  return { format: 'unknown' };
}

/** Reads and parses the header of the file at `path` (its first 4 KiB). */
export function readExecutableHeader(path: string): ExecutableHeader {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(4096);
    const n = readSync(fd, buf, 0, buf.length, 0);
    return parseExecutableHeader(buf.subarray(0, n));
  } finally {
    closeSync(fd);
  }
}

/** A short human description of a header, for refusal messages. */
export function describeHeader(h: ExecutableHeader): string {
  switch (h.format) {
    case 'elf':
      return `ELF${h.bits} e_machine ${h.machine} (${ELF_MACHINES[h.machine] ?? 'unknown'})`;
    case 'macho':
      return `Mach-O cputype ${h.cpuTypes.map((c) => `0x${c.toString(16)}`).join(', ')}`;
    case 'script':
      return `script for ${h.interpreter}`;
    default:
      return 'not an ELF or Mach-O executable or a #! script';
  }
}
