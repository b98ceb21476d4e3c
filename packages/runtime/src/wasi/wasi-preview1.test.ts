import { mkdirSync, mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createPreview1, E, WasiExit } from './wasi-preview1.mjs';

function setup() {
  const root = mkdtempSync(join(tmpdir(), 'heddle-p1-'));
  const data = join(root, 'data');
  mkdirSync(data);
  writeFileSync(join(root, 'secret.txt'), 'outside');
  // cast: the WebAssembly global has no type under lib ES2024 without DOM; this declares what is used.
  const { WebAssembly: Wasm } = globalThis as unknown as {
    WebAssembly: { Memory: new (d: { initial: number; maximum: number }) => { buffer: ArrayBuffer } };
  };
  const memory = new Wasm.Memory({ initial: 1, maximum: 4 });
  const sink = openSync('/dev/null', 'w');
  const p1 = createPreview1({
    args: ['guest', '--once'],
    env: { A: 'b' },
    preopens: { '/data': data },
    stdout: sink,
    stderr: sink,
    getMemory: () => memory,
  });
  const mem = () => new Uint8Array(memory.buffer);
  const put = (at: number, text: string): number => {
    const bytes = new TextEncoder().encode(text);
    mem().set(bytes, at);
    return bytes.length;
  };
  const call = (name: string, ...args: Array<number | bigint>): number => {
    const fn = p1[name];
    if (fn === undefined) throw new Error(`no ${name}`);
    return fn(...args);
  };
  const open = (path: string, oflags = 0, rights = 0x42n): number => {
    const len = put(1000, path);
    return call('path_open', 3, 0, 1000, len, oflags, rights, 0n, 0, 2000);
  };
  return { root, data, memory, mem, put, call, open, p1 };
}

describe('the runner WASI preview1 (junk from the guest never crashes it)', () => {
  it('resolves paths only inside the preopen: .., absolute paths and links are ENOTCAPABLE', () => {
    const t = setup();
    expect(t.open('../secret.txt')).toBe(E.NOTCAPABLE);
    expect(t.open('/etc/passwd')).toBe(E.NOTCAPABLE);
    expect(t.open('a/../../secret.txt')).toBe(E.NOTCAPABLE);
    expect(t.open('new.txt', 1 | 8)).toBe(0); // CREAT | TRUNC
    const fd = new DataView(t.memory.buffer).getUint32(2000, true);
    const n = t.put(3000, 'hello');
    new DataView(t.memory.buffer).setUint32(100, 3000, true);
    new DataView(t.memory.buffer).setUint32(104, n, true);
    expect(t.call('fd_write', fd, 100, 1, 200)).toBe(0);
    expect(readFileSync(join(t.data, 'new.txt'), 'utf8')).toBe('hello');
    expect(t.open('sub/../new.txt')).toBe(0); // resolved lexically, never through the file system
    const len = t.put(1000, 'l');
    const target = t.put(1100, '/');
    expect(t.call('path_symlink', 1100, target, 3, 1000, len)).toBe(E.NOTCAPABLE);
    // Invalid UTF-8 in a path.
    t.mem().set([0xff, 0xfe], 1000);
    expect(t.call('path_open', 3, 0, 1000, 2, 0, 0x42n, 0n, 0, 2000)).toBe(E.ILSEQ);
  });

  it('answers bad descriptors and pointers with an errno', () => {
    const t = setup();
    expect(t.call('fd_write', 99, 0, 1, 16)).toBe(E.BADF);
    expect(t.call('fd_write', 1, 70000, 1, 16)).toBe(E.FAULT);
    expect(t.call('args_get', 65530, 65535)).toBe(E.FAULT);
    expect(t.call('fd_prestat_dir_name', 3, 0, 2)).toBe(E.NAMETOOLONG);
    expect(t.call('fd_seek', 1, 0n, 0, 0)).toBe(E.SPIPE);
    expect(t.call('sock_recv', 0, 0, 0, 0, 0, 0)).toBe(E.NOSYS);
    expect(() => t.call('proc_exit', 7)).toThrow(WasiExit);
  });

  it('random_get checks the guest range before it allocates or fills anything', () => {
    const t = setup();
    const before = process.memoryUsage().arrayBuffers;
    // 64 MiB asked into a 64 KiB memory: a fault, with no host buffer of that size made on the way.
    expect(t.call('random_get', 16, 64 * 1024 * 1024)).toBe(E.FAULT);
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(1024 * 1024);
    expect(t.call('random_get', 16, -1)).toBe(E.FAULT);
    t.mem().fill(0, 16, 48);
    expect(t.call('random_get', 16, 32)).toBe(0);
    expect(
      t
        .mem()
        .subarray(16, 48)
        .some((b) => b !== 0),
    ).toBe(true);
  });

  it('fd_renumber of a descriptor onto itself keeps it open', () => {
    const t = setup();
    expect(t.open('keep.txt', 1, 0x42n)).toBe(0); // CREAT, read and write
    const fd = new DataView(t.memory.buffer).getUint32(2000, true);
    expect(t.call('fd_renumber', fd, fd)).toBe(0);
    const n = t.put(3000, 'kept');
    new DataView(t.memory.buffer).setUint32(100, 3000, true);
    new DataView(t.memory.buffer).setUint32(104, n, true);
    expect(t.call('fd_write', fd, 100, 1, 200)).toBe(0);
    expect(readFileSync(join(t.data, 'keep.txt'), 'utf8')).toBe('kept');
  });

  it('never throws on any arguments (property over every call)', () => {
    const t = setup();
    const names = Object.keys(t.p1).filter((n) => n !== 'proc_exit' && n !== 'poll_oneoff');
    const arg = fc.oneof(
      fc.integer({ min: -1, max: 70000 }),
      fc.constantFrom(0, 1, 2, 3, 4, 65535, 65536, 0x7fffffff),
    );
    fc.assert(
      fc.property(fc.constantFrom(...names), fc.array(arg, { minLength: 9, maxLength: 9 }), (name, raw) => {
        // i64 parameters arrive as BigInt: give every argument both shapes in turn.
        const args = raw.map((v, i) => (i % 2 === 0 ? v : BigInt(Math.max(0, v))));
        const r = t.call(name, ...args);
        expect(Number.isInteger(r)).toBe(true);
      }),
      { numRuns: 3000 },
    );
    expect(readFileSync(join(t.root, 'secret.txt'), 'utf8')).toBe('outside');
  });
});
