/**
 * The types of the operator API's answers that `@heddle/control-plane` has no exact type for (its
 * records with optional fields, and the answers the routes compose). The schemas in `answers.ts`
 * produce exactly these.
 */
import type { AttemptOutcome, PlacementState } from '@heddle/control-plane';
import type { JsonValue } from '@heddle/envelope';
import type { ExecutionTier, ScoreParts } from '@heddle/placement';

/** A placement as the API answers it (`PlacementRecord` of `@heddle/control-plane`). */
export interface Placement {
  /** The instance id on its node. */
  readonly instance_id: string;
  readonly node_id: string;
  readonly order_id: string;
  /** The chain hash of the controller's decision that placed it. */
  readonly decision_id: string;
  readonly workload: string;
  readonly version: string;
  readonly variant: string;
  readonly runtime: string;
  /** Empty for a Seed store pin. */
  readonly manifest_hash: string;
  readonly package_id: string;
  readonly signer_keys: readonly string[];
  readonly artifact_hashes: readonly string[];
  readonly state: PlacementState;
  /** The operator wants it running (set by start, cleared by stop). */
  readonly desired_running: boolean;
  readonly placed_at_ms: number;
  readonly updated_at_ms: number;
  /** The instance this one replaced (a reschedule), or null/absent for an original placement. */
  readonly replaces?: string | null | undefined;
  /** Reschedules of its lineage so far (absent or 0 for an original). */
  readonly reschedules?: number | undefined;
  /** The resources it holds on its node (schema v10; absent on older records and Seed store pins). */
  readonly ram_mb?: number | undefined;
  readonly cpu_pct?: number | undefined;
}

/** One row of an explanation: a node and its verdict. */
export interface ExplainRowAnswer {
  readonly node_id: string;
  readonly verdict: 'chosen' | 'pinned' | 'candidate' | 'rejected';
  readonly variant?: string | undefined;
  readonly execution?: ExecutionTier | undefined;
  readonly score?: number | undefined;
  /** The score's parts (their sum is the score). */
  readonly parts?: ScoreParts | undefined;
  /** The constraints a rejected node failed. */
  readonly failures?: readonly ConstraintFailureAnswer[] | undefined;
}

/** One failed constraint of a rejected node (`ConstraintFailure` of `@heddle/placement`). */
export interface ConstraintFailureAnswer {
  /** Which constraint (`tier`, `memory`, `requirements`, ...). */
  readonly constraint: string;
  /** What failed, for people. */
  readonly detail: string;
  /** For `requirements` and `emulation`: the variant. */
  readonly variant?: string | undefined;
  /** For `requirements`: the alternative of the variant that failed so. */
  readonly alternative?: string | undefined;
  /** For `requirements`: the first requirement not met. */
  readonly requirement?: string | undefined;
  /** For `requirements`: the stable reason code. */
  readonly reason?: string | undefined;
}

/** The engine's explanation of a decision (`Explanation` of `@heddle/placement`). */
export interface ExplanationAnswer {
  readonly workload: string;
  readonly outcome: 'placed' | 'unplaceable' | 'pin_refused';
  readonly node_id?: string | undefined;
  readonly summary: string;
  readonly nodes_evaluated: number;
  readonly nodes_total: number;
  readonly sampled: boolean;
  readonly rows: readonly ExplainRowAnswer[];
}

/** The answer of `POST /v1/place` (`PlaceResult` of `@heddle/control-plane`). */
export interface PlaceAnswer {
  /**
   * `placed`; `dry_run` (decided, nothing chained or placed); `unsettled` (a lost answer not yet
   * reconciled); `awaiting_approval` (the policy defers it: held under `approval_id` until an operator
   * approves or rejects it, or it expires).
   */
  readonly status: 'placed' | 'dry_run' | 'unsettled' | 'awaiting_approval';
  /** The approval request holding the place (status `awaiting_approval` only). */
  readonly approval_id?: string | undefined;
  readonly order_id: string | null;
  /** The chain hash of the decision (null for a dry run). */
  readonly decision_id: string | null;
  readonly instance: Placement | null;
  readonly attempts: readonly AttemptOutcome[];
  readonly explanation: ExplanationAnswer;
  /** Present (true) when this answer is a retry's with the same idempotency key. */
  readonly replayed?: boolean | undefined;
}

/** The answer of `GET /v1/health`: the controller's node id and counts. */
export interface ApiHealth {
  /** The controller's node id. */
  readonly controller: string;
  /** Known nodes. */
  readonly nodes: number;
  /** Placements still on their node (not lost, rescheduled, revoked or unloaded). */
  readonly instances: number;
  /** Unsettled decisions. */
  readonly unsettled: number;
  /**
   * Several controllers over one database: who leads (null: this controller runs alone; absent from
   * older controllers).
   */
  readonly leadership?: ApiLeadership | null | undefined;
}

/** Who leads the controllers sharing one database, as the answering controller last learned it. */
export interface ApiLeadership {
  /** True while the answering controller leads (runs the lifecycle tick). */
  readonly leading: boolean;
  /** The node id of the controller holding the lease, or null before any did. */
  readonly leader: string | null;
  /** The lease's term (raised each time it changes hands). */
  readonly epoch: number;
  /** When the lease ends, on the database's clock (Unix ms). */
  readonly expires_at_ms: number;
  /** Why the answering controller's last refresh of the lease failed, or null. */
  readonly last_error: string | null;
}

/** `{placement, node}`: a placement and the host's own view of the instance. */
export interface InstanceStatus {
  readonly placement: Placement;
  /** The host's instance view (as its `workload.status` answered). */
  readonly node: JsonValue;
}

/** The last lines of an instance's output. */
export interface InstanceLogs {
  readonly instance_id: string;
  readonly lines: readonly string[];
  readonly truncated: boolean;
}

/** The answer of a stop: the placement and the host's evidence. */
export interface StopResult {
  readonly placement: Placement;
  readonly evidence: JsonValue;
}

/** The answer of `GET /v1/revocations`. */
export interface RevocationStatus {
  /** The generation this controller distributes (0: none). */
  readonly generation: number;
  /** Each node's acknowledgement. */
  readonly nodes: readonly {
    readonly node_id: string;
    readonly generation: number;
    readonly acked_at_ms: number | null;
    readonly last_error: string | null;
  }[];
}

/** The body of every failure of the operator API (`{"error": ApiErrorBody}`). */
export interface ApiErrorBody {
  /** A stable snake_case code (README, "Error codes"). */
  readonly code: string;
  /** What went wrong and what to do. */
  readonly message: string;
  /** The input field at fault, when there is one. */
  readonly field?: string | undefined;
  /** Per-node reasons (node id to reason), for `unplaceable` and `refused`. */
  readonly reasons?: Readonly<Record<string, string>> | undefined;
}

/** One line of the `POST /v1/place` NDJSON stream. */
export type PlaceStreamEvent =
  | {
      readonly event: 'progress';
      readonly node_id: string;
      readonly bytes: number;
      readonly total: number;
    }
  | { readonly event: 'result'; readonly result: PlaceAnswer }
  | { readonly event: 'error'; readonly error: ApiErrorBody };

/** What the running daemon writes to `<home>/api.json` (mode 0600) after it listens. */
export interface ApiInfo {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** The daemon's process id. */
  readonly pid: number;
  /** The controller's node id. */
  readonly node_id: string;
  /** The TLS listener for other machines, when configured: its URL and certificate fingerprint. */
  readonly remote?: { readonly url: string; readonly fingerprint: string } | undefined;
}
