import type { Capability } from '@heddle/placement';
import { spawnWasiRun } from '../wasi/wasi-process.js';

/**
 * The smallest WASI command: `(module (memory (export "memory") 1) (func (export "_start")))`. The probe
 * runs it in a runner process to prove that this Node can run WASI preview1 guests.
 */
export const WASI_PROBE_MODULE: Uint8Array = new Uint8Array([
  0x00,
  0x61,
  0x73,
  0x6d,
  0x01,
  0x00,
  0x00,
  0x00, // header
  0x01,
  0x04,
  0x01,
  0x60,
  0x00,
  0x00, // type: () -> ()
  0x03,
  0x02,
  0x01,
  0x00, // function 0 of type 0
  0x05,
  0x04,
  0x01,
  0x01,
  0x01,
  0x01, // memory: min 1, max 1
  0x07,
  0x13,
  0x02,
  0x06,
  0x6d,
  0x65,
  0x6d,
  0x6f,
  0x72,
  0x79,
  0x02,
  0x00, // export "memory"
  0x06,
  0x5f,
  0x73,
  0x74,
  0x61,
  0x72,
  0x74,
  0x00,
  0x00, // export "_start"
  0x0a,
  0x04,
  0x01,
  0x02,
  0x00,
  0x0b, // code: empty body
]);

/**
 * Probes WASI support by running {@link WASI_PROBE_MODULE} in a runner process as `user` (the account
 * runs are made as; killed after 10 s):
 * `[runtime.wasi]` with provenance `probed` when it exits 0, otherwise none.
 */
export async function probeWasi(
  maxMemoryMb: number,
  user?: { readonly uid: number; readonly gid: number },
): Promise<readonly Capability[]> {
  const run = spawnWasiRun({
    bytes: WASI_PROBE_MODULE,
    args: ['probe'],
    env: {},
    preopens: {},
    capPages: 1,
    runnerHeapMb: 32,
    outputBytes: 1024,
    cpuSeconds: 10,
    ...(user === undefined ? {} : { user }),
  });
  const timer = setTimeout(() => void run.stop(0), 10_000);
  const result = await run.done;
  clearTimeout(timer);
  if (result.exitCode !== 0 || !result.statuses.some((s) => s.event === 'exit')) return [];
  return [
    {
      id: 'runtime.wasi',
      attrs: {
        wasi_version: 'preview1',
        engine: `heddle-wasi-preview1 on node ${process.versions.node}`,
        v8: process.versions.v8,
        max_memory_mb: maxMemoryMb,
        preopens: 'data_dir',
        network: 'none',
      },
      provenance: 'probed',
      state: 'available',
      exclusive: false,
    },
  ];
}
