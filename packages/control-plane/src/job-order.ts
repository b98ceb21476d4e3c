import { canonicalJson } from '@heddle/envelope';
import type { PlaceOrderInput } from './order.js';
import type { JobVersionRecord } from './state-store.js';

/**
 * The order a job version's instance is placed with (through the normal place path): its package by
 * manifest hash, its mode and values, started, with its label constraints and spread; pinned to
 * `node` for a system job. The job's arch, runtime and tier constraints are applied by the reconciler
 * (the nodes that fail them are left out of the engine's view).
 */
export function jobPlaceOrder(v: JobVersionRecord, node: string | null): PlaceOrderInput {
  const labels = Object.entries(v.spec.constraints.labels ?? {});
  return {
    manifest_hash: v.manifest_hash,
    mode: v.spec.mode,
    values: v.spec.values,
    start: true,
    allow_emulated: v.spec.allow_emulated,
    ...(node === null ? {} : { node }),
    ...(labels.length === 0 ? {} : { constraints: labels.map(([label, value]) => ({ label, value })) }),
    ...(v.spec.spread === undefined ? {} : { spread: v.spec.spread }),
  };
}

/**
 * Whether an instance of version `a` runs exactly what version `b` would place: the same package,
 * config values and mode (then it is the identical instance, and `b` adopts it in place).
 */
export function sameRun(a: JobVersionRecord, b: JobVersionRecord): boolean {
  return (
    a.manifest_hash === b.manifest_hash &&
    canonicalJson(a.spec.values) === canonicalJson(b.spec.values) &&
    canonicalJson(a.spec.mode) === canonicalJson(b.spec.mode)
  );
}
