// The registry of network fault kinds: one module per kind in this folder, listed here. A new kind
// (clock skew, disk full, ...) is a file exporting a `NetFaultKind` and one line in this list.
import { flap } from './flap.js';
import { halfFleet } from './half-fleet.js';
import { hostKill } from './host-kill.js';
import { latency, loss } from './impair.js';
import type { NetFaultKind } from './kind.js';
import { partitionBoth, partitionIn, partitionOut } from './partition.js';

/** Every fault kind the namespace trials and the soak draw from, by name. */
export const NET_FAULT_KINDS: readonly NetFaultKind[] = [
  partitionBoth,
  partitionIn,
  partitionOut,
  flap,
  halfFleet,
  latency,
  loss,
  hostKill,
];

/** The kind called `name` (throws when there is none). */
export function faultKind(name: string): NetFaultKind {
  const k = NET_FAULT_KINDS.find((x) => x.name === name);
  if (k === undefined)
    throw new Error(`no fault kind ${name} (known: ${NET_FAULT_KINDS.map((x) => x.name).join(', ')})`);
  return k;
}
