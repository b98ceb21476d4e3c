// The `@heddle/control-plane/leader` entry: leadership of several controllers over one PostgreSQL
// database (a lease row; `pg` is loaded by this entry only).

export {
  LeaderElector,
  type LeaderElectorOptions,
  type LeaderLeaseBackend,
  type LeaderStatus,
  type NewTerm,
} from './leader-elector.js';
export {
  type AcquireResult,
  type LeaseConnection,
  type LeaseRow,
  PgLeaderLease,
} from './pg-leader-lease.js';
