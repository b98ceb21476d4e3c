import { createRequire } from 'node:module';

/**
 * The part of `@napi-rs/blake-hash` (an optional dependency: prebuilt BLAKE3 for linux x64, arm64 and
 * armhf, macOS and Windows) that the digest functions use.
 */
export interface NativeBlake3 {
  /** BLAKE3-256 of `input`. */
  blake3(input: Uint8Array): Uint8Array;
  /** A streaming hasher. */
  createHasher(): { update(input: Uint8Array): void; digest(): Uint8Array };
}

/** Which BLAKE3 implementation the digest functions use for large inputs and streams. */
export type Blake3Backend = 'native' | 'portable';

/** `HEDDLE_BLAKE3=portable` turns the native fast path off (the WebAssembly one is then used). */
export const BLAKE3_BACKEND_ENV = 'HEDDLE_BLAKE3';

// The first official BLAKE3 test vector past one chunk (input bytes i % 251, length 1025): the native
// module is used only when it gives this digest, so a broken or foreign build cannot change a hash.
const CHECK_LENGTH = 1025;
const CHECK_DIGEST = 'd00278ae47eb27b34faecf67b4fe263f82d5412916c1ffd97c8cb7fb814b8444';

interface NapiBlake3Module {
  blake3(input: Uint8Array): Uint8Array;
  Blake3Hasher: new () => { update(input: Uint8Array): unknown; digestBuffer(): Uint8Array };
}

function isNapiModule(mod: unknown): mod is NapiBlake3Module {
  if (typeof mod !== 'object' || mod === null) return false;
  // cast: an object's fields are read to check their types, one by one below
  const m = mod as Record<string, unknown>;
  return typeof m.blake3 === 'function' && typeof m.Blake3Hasher === 'function';
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

const requireNative = (): unknown => createRequire(import.meta.url)('@napi-rs/blake-hash');

/**
 * Loads the native BLAKE3 when it is installed, not turned off by `HEDDLE_BLAKE3=portable`, and gives
 * the published digest for a test vector; `undefined` otherwise (the caller falls back to WebAssembly).
 * `load` replaces the module's loading (tests give it a broken module).
 */
export function loadNativeBlake3(
  env: NodeJS.ProcessEnv = process.env,
  load: () => unknown = requireNative,
): NativeBlake3 | undefined {
  if (env[BLAKE3_BACKEND_ENV] === 'portable') return undefined;
  let mod: unknown;
  try {
    mod = load();
  } catch {
    return undefined;
  }
  if (!isNapiModule(mod)) return undefined;
  const napi = mod;
  const toBytes = (b: Uint8Array): Uint8Array => new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  const native: NativeBlake3 = {
    blake3: (input) => toBytes(napi.blake3(input)),
    createHasher: () => {
      const h = new napi.Blake3Hasher();
      return {
        update: (input) => {
          h.update(input);
        },
        digest: () => toBytes(h.digestBuffer()),
      };
    },
  };
  const check = Uint8Array.from({ length: CHECK_LENGTH }, (_, i) => i % 251);
  try {
    const stream = native.createHasher();
    stream.update(check.subarray(0, 1000));
    stream.update(check.subarray(1000));
    if (hex(native.blake3(check)) !== CHECK_DIGEST || hex(stream.digest()) !== CHECK_DIGEST) return undefined;
  } catch {
    return undefined;
  }
  return native;
}
