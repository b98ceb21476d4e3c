import { StateError } from './errors.js';
import type { IdempotencyRecord, JobVersionRecord, StateStore } from './state-store.js';

/** A store a whole state can be copied from or to: the interface, its meta values and its idempotency keys. */
export type CopyableStore = StateStore & {
  listMeta(): [string, string][];
  putMeta(key: string, value: string): void;
  listIdempotencyKeys(): IdempotencyRecord[];
  listAllJobVersions(): JobVersionRecord[];
};

/** How many records of each kind a state holds (`meta`: application meta values). */
export type StateCounts = Readonly<Record<string, number>>;

interface Kind {
  readonly name: string;
  readonly list: (s: CopyableStore) => readonly unknown[];
  readonly put: (s: CopyableStore, r: never) => void;
}

const kind = <R>(
  name: string,
  list: (s: CopyableStore) => readonly R[],
  put: (s: CopyableStore, r: R) => void,
): Kind => ({
  name,
  list,
  // cast: a put is only ever given a record from the list of its own kind (copyState)
  put: put as (s: CopyableStore, r: never) => void,
});

/** Every kind of record of a state, in the order they are copied. */
const KINDS: readonly Kind[] = [
  kind(
    'targets',
    (s) => s.listTargets(),
    (s, r) => s.putTarget(r),
  ),
  kind(
    'node_meta',
    (s) => s.listNodeMeta(),
    (s, r) => s.putNodeMeta(r),
  ),
  kind(
    'orders',
    (s) => s.listOrders(),
    (s, r) => s.putOrder(r),
  ),
  kind(
    'placements',
    (s) => s.listPlacements(),
    (s, r) => s.putPlacement(r),
  ),
  kind(
    'unsettled',
    (s) => s.listUnsettled(),
    (s, r) => s.putUnsettled(r),
  ),
  kind(
    'place_claims',
    (s) => s.listPlaceClaims(),
    (s, r) => s.putPlaceClaim(r),
  ),
  kind(
    'reschedules',
    (s) => s.listReschedules(),
    (s, r) => s.putReschedule(r),
  ),
  kind(
    'alerts',
    (s) => s.listAlerts(),
    (s, r) => s.putAlert(r),
  ),
  kind(
    'revocation_acks',
    (s) => s.listRevocationAcks(),
    (s, r) => s.putRevocationAck(r),
  ),
  kind(
    'revocation_list',
    (s) => {
      const l = s.getRevocationList();
      return l === undefined ? [] : [l];
    },
    (s, r) => s.putRevocationList(r),
  ),
  kind(
    'jobs',
    (s) => s.listJobs(),
    (s, r) => s.putJob(r),
  ),
  kind(
    'job_versions',
    (s) => s.listAllJobVersions(),
    (s, r) => s.putJobVersion(r),
  ),
  kind(
    'job_instances',
    (s) => s.listJobInstances(),
    (s, r) => s.putJobInstance(r),
  ),
  kind(
    'idempotency_keys',
    (s) => s.listIdempotencyKeys(),
    (s, r) => s.putIdempotencyKey(r),
  ),
  kind(
    'meta',
    (s) => s.listMeta(),
    (s, [k, v]: [string, string]) => s.putMeta(k, v),
  ),
];

/** How many records of each kind `store` holds (every row is read and validated). */
export function countState(store: CopyableStore): StateCounts {
  return Object.fromEntries(KINDS.map((k) => [k.name, k.list(store).length]));
}

/**
 * Copies every record of `from` into `to` in one transaction of `to` (all or nothing), then counts
 * both and compares. Refuses with `StateError` `corrupt` (nothing is kept: the copy is one
 * transaction, and a mismatch found after it is reported, naming the kind) when the counts differ.
 * Returns the counts. The caller checks that `to` was empty.
 */
export function copyState(from: CopyableStore, to: CopyableStore): StateCounts {
  const source = KINDS.map((k) => ({ k, records: k.list(from) }));
  to.transaction(() => {
    // cast: each record goes back to the put of the kind whose list it came from
    for (const { k, records } of source) for (const r of records) k.put(to, r as never);
  });
  const want = Object.fromEntries(source.map(({ k, records }) => [k.name, records.length]));
  const got = countState(to);
  for (const name of Object.keys(want)) {
    if (got[name] !== want[name]) {
      throw new StateError(
        'corrupt',
        `after the copy the target holds ${got[name]} ${name}, the source ${want[name]}`,
        {
          field: name,
        },
      );
    }
  }
  return want;
}
