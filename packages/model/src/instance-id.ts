import { blake3Hex, canonicalJson, type JsonValue } from '@heddle/envelope';
import type { RunMode } from './run-mode.js';

/**
 * The instance id of a workload reference (package id or store pin ref) loaded with these config
 * values and run mode on this node: `<workload id>-<first 16 hex of BLAKE3(canonical JSON)>`. The same
 * request on the same node always gives the same id, so a repeated place is idempotent and a
 * controller that lost an answer can find what its call produced by asking for that id.
 */
export function deriveInstanceId(
  workloadId: string,
  ref: string,
  values: Readonly<Record<string, JsonValue>>,
  runMode: RunMode,
  nodeId: string,
): string {
  const mode: JsonValue =
    runMode.type === 'interval' ? { type: 'interval', secs: runMode.secs } : { type: runMode.type };
  const digest = blake3Hex(
    new TextEncoder().encode(
      canonicalJson({
        v: 1,
        ref,
        values,
        run_mode: mode,
        node_id: nodeId,
      }),
    ),
  );
  return `${workloadId}-${digest.slice(0, 16)}`;
}
