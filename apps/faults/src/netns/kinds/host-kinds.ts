// The host fault kinds of issue 23 beyond the network (one module each): a host's clock skewed past
// the window or drifting (libfaketime), and its disk filling up mid-transfer. They need a cluster
// prepared for them (`NetCluster.startNet({ faketime: true })`, `mountPackageStores`, the
// `native-big` package), so they are listed here, apart from the network kinds of index.ts.
import { clockDrift, clockSkew } from './clock-skew.js';
import { diskFull } from './disk-full.js';
import type { NetFaultKind } from './kind.js';

/** The clock and disk fault kinds, by name. */
export const HOST_FAULT_KINDS: readonly NetFaultKind[] = [clockSkew, clockDrift, diskFull];
