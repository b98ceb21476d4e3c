import { readFile } from 'node:fs/promises';
import { blake3Hex } from '@heddle/envelope';
import type { CogBody, VerifiedWorkload } from '@heddle/package';
import { messageOf, RuntimeError } from '../errors.js';
import { WASI_VARIANT } from './wasi-admission.js';
import { type CappedWasmModule, capWasmMemory } from './wasi-module.js';

/** The part of the WebAssembly JS API used here (the repo's TypeScript lib has no DOM types). */
interface WasmApi {
  compile(bytes: Uint8Array): Promise<object>;
  Module: {
    exports(m: object): { name: string; kind: string }[];
    imports(m: object): { module: string; name: string; kind: string }[];
  };
}

/**
 * The admitted variant's module, ready to run: read again and re-hashed (refused when it changed since
 * it was verified), its linear memory capped at `capMb` MiB, then compiled and checked (see
 * {@link checkModule}). Every refusal is `admission`, field `variant.file`.
 */
export async function loadCappedModule(
  verified: VerifiedWorkload<CogBody>,
  capMb: number,
): Promise<CappedWasmModule> {
  const variant = verified.body.variants[WASI_VARIANT];
  const file = verified.files.find((f) => f.path === variant?.file);
  if (variant === undefined || file === undefined) throw new RuntimeError('admission', 'variants: vanished');
  const bytes = new Uint8Array(await readFile(file.absolutePath));
  if (blake3Hex(bytes) !== file.blake3) {
    throw new RuntimeError('admission', `variant.file: ${file.path} changed since it was verified`, {
      field: 'variant.file',
    });
  }
  const module = capWasmMemory(bytes, Math.max(1, Math.floor(capMb * 16)));
  await checkModule(module);
  return module;
}

/** Compiles the capped module and checks it has `_start` and imports only WASI preview1 (and its memory). */
async function checkModule(module: CappedWasmModule): Promise<void> {
  // cast: the WebAssembly global has no type under lib ES2024 without DOM; WasmApi declares the two calls used.
  const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
  let compiled: object;
  try {
    compiled = await wasm.compile(module.bytes);
  } catch (err) {
    throw new RuntimeError('admission', `variant.file: the module does not compile: ${messageOf(err)}`, {
      field: 'variant.file',
      cause: err,
    });
  }
  if (!wasm.Module.exports(compiled).some((e) => e.name === '_start' && e.kind === 'function')) {
    throw new RuntimeError(
      'admission',
      'variant.file: the module exports no _start function (a WASI command)',
      {
        field: 'variant.file',
      },
    );
  }
  for (const imp of wasm.Module.imports(compiled)) {
    const isMemory = imp.kind === 'memory' && module.imported !== undefined;
    if (imp.module !== 'wasi_snapshot_preview1' && !isMemory) {
      throw new RuntimeError(
        'admission',
        `variant.file: the module imports ${imp.module}.${imp.name}, which the WASI runner does not provide`,
        { field: 'variant.file' },
      );
    }
  }
}
