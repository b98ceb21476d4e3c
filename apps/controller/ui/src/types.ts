// What the dashboard reads from the operator API: the answer types of @heddle/operator-api (types
// only: nothing of the package is bundled), and the approvals' shape.

export type { AlertRecord, NodeView } from '@heddle/control-plane';
export type {
  ChainEventAnswer,
  ChainEventProofAnswer,
  ChainHeadAnswer,
  DecisionAnswer,
  ExplainRowAnswer,
  InstanceLogs,
  Placement,
} from '@heddle/operator-api';

/** An approval as `GET /v1/approvals` lists it (the fields the dashboard shows; others are ignored). */
export interface Approval {
  readonly approval_id: string;
  readonly state: string;
  readonly workload?: string | null | undefined;
  readonly node_id?: string | null | undefined;
  readonly reason?: string | null | undefined;
  readonly requested_at_ms?: number | null | undefined;
  readonly expires_at_ms?: number | null | undefined;
  readonly decided_by?: string | null | undefined;
}
