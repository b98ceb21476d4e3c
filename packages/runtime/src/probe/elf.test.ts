import { describe, expect, it } from 'vitest';
import { hostCogArch, parseExecutableHeader, readExecutableHeader } from './elf.js';

function elf(bits: 32 | 64, machine: number, bigEndian = false): Uint8Array {
  const b = Buffer.alloc(64);
  b.set([0x7f, 0x45, 0x4c, 0x46, bits === 32 ? 1 : 2, bigEndian ? 2 : 1, 1]);
  if (bigEndian) b.writeUInt16BE(machine, 18);
  else b.writeUInt16LE(machine, 18);
  return b;
}

describe('parseExecutableHeader', () => {
  it('maps ELF class and e_machine to cog arches', () => {
    expect(parseExecutableHeader(elf(64, 62))).toMatchObject({ format: 'elf', arch: 'x86_64' });
    expect(parseExecutableHeader(elf(64, 183))).toMatchObject({ format: 'elf', arch: 'aarch64' });
    expect(parseExecutableHeader(elf(32, 40))).toMatchObject({ format: 'elf', arch: 'armv7' });
    expect(parseExecutableHeader(elf(64, 243))).toMatchObject({ format: 'elf', arch: 'riscv64' });
    expect(parseExecutableHeader(elf(32, 62))).toMatchObject({ format: 'elf', arch: undefined });
    expect(parseExecutableHeader(elf(64, 62, true))).toMatchObject({ machine: 62 });
  });

  it('reads thin and universal Mach-O headers', () => {
    const thin = Buffer.alloc(32);
    thin.writeUInt32LE(0xfeedfacf, 0);
    thin.writeUInt32LE(0x0100000c, 4);
    expect(parseExecutableHeader(thin)).toMatchObject({ format: 'macho', arches: ['aarch64'] });
    const fat = Buffer.alloc(64);
    fat.writeUInt32BE(0xcafebabe, 0);
    fat.writeUInt32BE(2, 4);
    fat.writeUInt32BE(0x01000007, 8);
    fat.writeUInt32BE(0x0100000c, 28);
    expect(parseExecutableHeader(fat)).toMatchObject({ format: 'macho', arches: ['x86_64', 'aarch64'] });
  });

  it('reads #! lines and rejects anything else', () => {
    expect(parseExecutableHeader(Buffer.from('#!/usr/bin/env python3\nx'))).toEqual({
      format: 'script',
      interpreter: '/usr/bin/env',
      interpreterArg: 'python3',
    });
    expect(parseExecutableHeader(Buffer.from('#! /bin/sh\n'))).toMatchObject({ interpreter: '/bin/sh' });
    expect(parseExecutableHeader(Buffer.from('hello'))).toEqual({ format: 'unknown' });
    expect(parseExecutableHeader(new Uint8Array(0))).toEqual({ format: 'unknown' });
  });

  it("recognises this host's own node binary", () => {
    const h = readExecutableHeader(process.execPath);
    if (h.format === 'elf') expect(h.arch).toBe(hostCogArch());
    else if (h.format === 'macho') expect(h.arches).toContain(hostCogArch());
    expect(hostCogArch('x64')).toBe('x86_64');
    expect(hostCogArch('arm64')).toBe('aarch64');
    expect(hostCogArch('ia32')).toBeUndefined();
  });
});
