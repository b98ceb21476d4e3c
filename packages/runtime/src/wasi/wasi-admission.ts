import { open } from 'node:fs/promises';
import type { CogBody, VerifiedWorkload } from '@heddle/package';
import type { Admission } from '../contract.js';
import { RuntimeError } from '../errors.js';
import type { RuntimeWorkload } from '../workload.js';
import { WASI_DATA_DIR } from './wasi-args.js';
import { hasWasmHeader } from './wasi-module.js';

/** The variant the WASI adapter runs. */
export const WASI_VARIANT = 'wasm32-wasi';

/** The verified package of a workload; store pins are refused (`admission`, field `source`). */
export function wasiVerified(workload: RuntimeWorkload): VerifiedWorkload<CogBody> {
  if (workload.source.type !== 'package') {
    throw new RuntimeError('admission', 'source: the WASI adapter does not take store pins', {
      field: 'source',
    });
  }
  return workload.source.verified;
}

/** The linear-memory cap of a cog in MiB: its `ram_mb`, at most `maxMemoryMb`. */
export function wasiCapMb(body: CogBody, maxMemoryMb: number): number {
  return Math.min(body.resources.ram_mb, maxMemoryMb);
}

/**
 * The WASI adapter's admission self-check: refuses store pins, a package without a `wasm32-wasi`
 * variant, a variant file that is not verified or cannot be read, and a file that is not wasm.
 */
export async function admitWasi(
  workload: RuntimeWorkload,
  runtime: string,
  maxMemoryMb: number,
): Promise<Admission> {
  const verified = wasiVerified(workload);
  const variant = verified.body.variants[WASI_VARIANT];
  if (variant === undefined || variant.route !== 'wasi' || variant.arch !== 'wasm32') {
    throw new RuntimeError('admission', `variants: the package has no ${WASI_VARIANT} variant`, {
      field: 'variants',
    });
  }
  const file = verified.files.find((f) => f.path === variant.file);
  if (file === undefined) {
    throw new RuntimeError('admission', `variant.file: ${variant.file} is not a verified file`, {
      field: 'variant.file',
    });
  }
  const header = new Uint8Array(8);
  try {
    const fh = await open(file.absolutePath, 'r');
    try {
      await fh.read(header, 0, 8, 0);
    } finally {
      await fh.close();
    }
  } catch (err) {
    throw new RuntimeError('admission', `variant.file: ${variant.file} cannot be read`, {
      field: 'variant.file',
      cause: err,
    });
  }
  if (!hasWasmHeader(header)) {
    throw new RuntimeError('admission', `variant.file: ${variant.file} is not a WebAssembly 1.0 module`, {
      field: 'variant.file',
    });
  }
  const mb = wasiCapMb(verified.body, maxMemoryMb);
  return {
    runtime,
    variant: WASI_VARIANT,
    arch: 'wasm32',
    emulated: false,
    notes: [
      `WASI preview1 (the runner's own, not node:wasi) in an unprivileged runner process`,
      `linear memory capped at ${mb} MiB`,
      `preopened: ${WASI_DATA_DIR} only; no sockets`,
    ],
  };
}
