import { describe, expect, it } from 'vitest';
import { WASI_PROBE_MODULE } from '../probe/wasi-probe.js';
import { assembleWat, fixtureWasm } from './fixtures/fixtures.js';
import { capWasmMemory, hasWasmHeader } from './wasi-module.js';

interface WasmApi {
  validate(b: Uint8Array): boolean;
  Module: new (b: Uint8Array) => object;
  Instance: new (m: object, i: object) => { exports: Record<string, unknown> };
}
// cast: the WebAssembly global has no type under lib ES2024 without DOM; WasmApi declares what is used.
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

describe('capWasmMemory', () => {
  it('rewrites a memory without maximum to the cap, and growth past it fails', async () => {
    const bytes = await assembleWat(
      'g.wat',
      '(module (memory (export "memory") 1) (func (export "grow") (param i32) (result i32) (memory.grow (local.get 0))))',
    );
    const capped = capWasmMemory(bytes, 4);
    expect(capped.capBinds).toBe(true);
    expect(capped.defined).toEqual({ min: 1 });
    const inst = new wasm.Instance(new wasm.Module(capped.bytes), {});
    // cast: the module above exports `grow` as (i32) -> i32.
    const grow = inst.exports.grow as (n: number) => number;
    expect(grow(3)).toBe(1);
    expect(grow(1)).toBe(-1);
  });

  it('keeps a smaller declared maximum and leaves the bytes alone', () => {
    const capped = capWasmMemory(WASI_PROBE_MODULE, 16);
    expect(capped.capBinds).toBe(false);
    expect(capped.bytes).toBe(WASI_PROBE_MODULE);
    expect(wasm.validate(WASI_PROBE_MODULE)).toBe(true);
  });

  it('describes an imported memory with the capped maximum', async () => {
    const capped = capWasmMemory(await fixtureWasm('grow-imported'), 32);
    expect(capped.imported).toEqual({ module: 'env', name: 'memory', min: 1, cappedMax: 32 });
    expect(capped.capBinds).toBe(true);
  });

  it('refuses a bad header and an initial memory above the cap', async () => {
    expect(hasWasmHeader(new TextEncoder().encode('#!/bin/sh\n'))).toBe(false);
    expect(() => capWasmMemory(new TextEncoder().encode('#!/bin/sh\necho'), 4)).toThrow(/magic or version/);
    const big = await assembleWat('b.wat', '(module (memory 64))');
    expect(() => capWasmMemory(big, 16)).toThrow(/initial memory of 64 pages is above the cap of 16/);
  });
});
