// What the dashboard reads from the operator API: the answer types of @heddle/operator-api (types
// only: nothing of the package is bundled), and the approvals' shape.

/** An approval as `GET /v1/approvals` lists it (docs/operator-api.md, "Approvals"). */
export type { AlertRecord, ApprovalView as Approval, NodeView } from '@heddle/control-plane';
export type {
  ChainEventAnswer,
  ChainEventProofAnswer,
  ChainHeadAnswer,
  DecisionAnswer,
  ExplainRowAnswer,
  InstanceLogs,
  JobStatusAnswer,
  Placement,
} from '@heddle/operator-api';
