import { RuntimeError } from '../errors.js';

/** Size of one WebAssembly page: 64 KiB. */
export const WASM_PAGE_BYTES = 65536;

/** The first 8 bytes of every WebAssembly 1.0 binary module: `\0asm` then version 1 (little endian). */
export const WASM_HEADER: readonly number[] = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];

/** Declared limits of a linear memory, in pages. */
export interface WasmMemoryLimits {
  readonly min: number;
  /** Absent when the module declares no maximum. */
  readonly max?: number;
}

/** A memory the module imports rather than defines. */
export interface WasmImportedMemory extends WasmMemoryLimits {
  readonly module: string;
  readonly name: string;
}

/**
 * A module whose memory is capped at `capPages`: the bytes to run (the defined memory's maximum
 * rewritten to the cap) and, for an imported memory, the limits the runner must create it with.
 */
export interface CappedWasmModule {
  /** The module bytes with every defined memory's maximum at most `capPages`. */
  readonly bytes: Uint8Array;
  readonly capPages: number;
  /** The memory the module defines, as it declared it (before capping). */
  readonly defined?: WasmMemoryLimits;
  /** The memory the module imports; the runner gives it `{initial: min, maximum: capped max}`. */
  readonly imported?: WasmImportedMemory & { readonly cappedMax: number };
  /** True when the module declared no maximum or one above the cap (so the cap is what limits it). */
  readonly capBinds: boolean;
}

/** True when `bytes` starts with the WebAssembly 1.0 magic and version. */
export function hasWasmHeader(bytes: Uint8Array): boolean {
  if (bytes.length < 8) return false;
  return WASM_HEADER.every((b, i) => bytes[i] === b);
}

class Reader {
  pos: number;
  constructor(
    readonly bytes: Uint8Array,
    pos: number,
    readonly end: number,
  ) {
    this.pos = pos;
  }
  byte(): number {
    const b = this.pos < this.end ? this.bytes[this.pos] : undefined;
    if (b === undefined) throw bad('unexpected end of section');
    this.pos++;
    return b;
  }
  u32(): number {
    let result = 0;
    let shift = 0;
    for (let i = 0; i < 5; i++) {
      const b = this.byte();
      result += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) {
        if (result > 0xffffffff) throw bad('LEB128 value out of range');
        return result;
      }
      shift += 7;
    }
    throw bad('LEB128 value too long');
  }
  name(): string {
    const len = this.u32();
    if (this.pos + len > this.end) throw bad('name runs past its section');
    const s = new TextDecoder('utf-8', { fatal: false }).decode(
      this.bytes.subarray(this.pos, this.pos + len),
    );
    this.pos += len;
    return s;
  }
  limits(what: string): WasmMemoryLimits {
    const flags = this.byte();
    if (flags === 0) return { min: this.u32() };
    if (flags === 1) {
      const min = this.u32();
      return { min, max: this.u32() };
    }
    if (flags === 2 || flags === 3) throw bad(`${what}: shared memory is not supported`);
    throw bad(`${what}: 64-bit or unknown limits (flags ${flags}) are not supported`);
  }
}

function bad(message: string): RuntimeError {
  return new RuntimeError('admission', `wasm module: ${message}`, { field: 'variant.file' });
}

function encodeU32(value: number): number[] {
  const out: number[] = [];
  let v = value >>> 0;
  do {
    let b = v & 0x7f;
    v >>>= 7;
    if (v !== 0) b |= 0x80;
    out.push(b);
  } while (v !== 0);
  return out;
}

function skipImportDesc(r: Reader, kind: number): WasmMemoryLimits | undefined {
  switch (kind) {
    case 0: // function: type index
      r.u32();
      return undefined;
    case 1: // table: reftype + limits (table limits may be 64-bit in future; accept 0/1 only)
      r.byte();
      r.limits('imported table');
      return undefined;
    case 2:
      return r.limits('imported memory');
    case 3: // global: valtype + mutability
      r.byte();
      r.byte();
      return undefined;
    case 4: // tag: attribute + type index
      r.byte();
      r.u32();
      return undefined;
    default:
      throw bad(`unknown import kind ${kind}`);
  }
}

/**
 * Checks the header, finds the module's memory (defined or imported) and caps it at `capPages`:
 * a defined memory gets its maximum rewritten to `min(declared max, capPages)` so that `memory.grow`
 * beyond the cap fails inside the guest; an imported memory is described so that the runner creates
 * it with that maximum. Refuses (`admission`) a bad header, a malformed import or memory section, a
 * shared or 64-bit memory, more than one memory, and an initial size above the cap.
 */
export function capWasmMemory(bytes: Uint8Array, capPages: number): CappedWasmModule {
  if (!hasWasmHeader(bytes)) throw bad('not a WebAssembly 1.0 binary (bad magic or version header)');
  if (!Number.isSafeInteger(capPages) || capPages < 1 || capPages > 65536) {
    throw new RangeError(`capPages: expected 1..65536, got ${capPages}`);
  }
  let defined: WasmMemoryLimits | undefined;
  let imported: WasmImportedMemory | undefined;
  let memorySection: { start: number; end: number } | undefined;
  let pos = 8;
  while (pos < bytes.length) {
    const head = new Reader(bytes, pos, bytes.length);
    const id = head.byte();
    const size = head.u32();
    const start = head.pos;
    const end = start + size;
    if (end > bytes.length) throw bad(`section ${id} runs past the end of the module`);
    if (id === 2) {
      const r = new Reader(bytes, start, end);
      const count = r.u32();
      for (let i = 0; i < count; i++) {
        const module = r.name();
        const name = r.name();
        const limits = skipImportDesc(r, r.byte());
        if (limits !== undefined) {
          if (imported !== undefined) throw bad('more than one memory');
          imported = { module, name, ...limits };
        }
      }
    } else if (id === 5) {
      const r = new Reader(bytes, start, end);
      const count = r.u32();
      if (count > 1) throw bad('more than one memory');
      if (count === 1) defined = r.limits('memory');
      memorySection = { start: pos, end };
    }
    pos = end;
  }
  if (defined !== undefined && imported !== undefined) throw bad('more than one memory');
  const limits = defined ?? imported;
  if (limits !== undefined && limits.min > capPages) {
    throw bad(
      `initial memory of ${limits.min} pages is above the cap of ${capPages} pages (${(capPages * WASM_PAGE_BYTES) / 1048576} MiB)`,
    );
  }
  const capBinds = limits !== undefined && (limits.max === undefined || limits.max > capPages);
  let out = bytes;
  if (defined !== undefined && memorySection !== undefined && capBinds) {
    const body = [1, 1, ...encodeU32(defined.min), ...encodeU32(capPages)];
    const section = [5, ...encodeU32(body.length), ...body];
    out = new Uint8Array(bytes.length - (memorySection.end - memorySection.start) + section.length);
    out.set(bytes.subarray(0, memorySection.start), 0);
    out.set(section, memorySection.start);
    out.set(bytes.subarray(memorySection.end), memorySection.start + section.length);
  }
  return {
    bytes: out,
    capPages,
    ...(defined !== undefined ? { defined } : {}),
    ...(imported !== undefined
      ? { imported: { ...imported, cappedMax: Math.min(imported.max ?? capPages, capPages) } }
      : {}),
    capBinds,
  };
}
