import { type OperatorCommandDef, type OperatorGroupDef, operatorDef } from '../command-def.js';

// The definitions of `heddle approvals ...`: what each parses, what its --help and the CLI reference
// (docs/cli-reference.md) say. Data only, so that help and completion load nothing else.

const EXITS = {
  0: 'done',
  1: 'the held place failed after the approval (its detail is printed), or the controller is not running',
  2: 'usage error',
  3: 'bad input: approval_not_found, approval_already_decided, approval_expired, a --note longer than 2048 characters, unauthorized',
  4: 'internal error',
} as const;

const ID_ARG = [{ name: 'id', description: 'the approval id (see heddle approvals ls)' }] as const;

const NOTE_FLAG = {
  name: 'note',
  kind: 'string',
  value: '<text>',
  description: 'a note chained with the decision (at most 2048 characters)',
} as const;

/** `heddle approvals ls`. */
export const APPROVALS_LS: OperatorCommandDef = operatorDef({
  name: 'approvals ls',
  summary: 'list the approval requests: places the policy defers to an operator',
  description:
    'One row per request (docs/operator-guide.md, "Approvals"): APPROVAL (its id), STATE (pending, approved, rejected, expired), WORKLOAD (id@version), NODE (the node the engine chose), RULE (the policy’s defer rule), PLACE (held, placed, refused, expired, failed, unsettled) and EXPIRES (for a pending one) or AGE. Overdue requests are expired first. Only pending requests unless --all or --state.',
  positionals: [],
  flags: [
    { name: 'all', kind: 'boolean', description: 'every request, decided ones too' },
    {
      name: 'state',
      kind: 'string',
      value: '<pending|approved|rejected|expired>',
      description: 'only the requests in this state',
    },
  ],
  json: '{"approvals": ApprovalView[]}',
  exits: EXITS,
});

/** `heddle approvals show`. */
export const APPROVALS_SHOW: OperatorCommandDef = operatorDef({
  name: 'approvals show',
  summary: 'show one approval request and what became of its place',
  description:
    'The request (state, defer rule and reason, when it expires, who decided it with their note, what an approval came to when decided again) and the place it holds (workload, node, variant, status, and the instance once placed).',
  positionals: ID_ARG,
  flags: [],
  json: '{"approval": ApprovalView}',
  exits: EXITS,
});

/** `heddle approvals approve`. */
export const APPROVALS_APPROVE: OperatorCommandDef = operatorDef({
  name: 'approvals approve',
  summary: 'approve a pending request: its place proceeds through the engine',
  description:
    'The approval (approver and note) is chained; the gate decides the request again against the policy and revocations in force now. A permit places the held order through the engine as any place is, the approved check counting as permitted; the command answers once the place is done and prints the instance. A deny (revoked since, a changed policy) refuses it, naming why.',
  positionals: ID_ARG,
  flags: [NOTE_FLAG],
  json: '{"approval": ApprovalView}',
  exits: EXITS,
});

/** `heddle approvals reject`. */
export const APPROVALS_REJECT: OperatorCommandDef = operatorDef({
  name: 'approvals reject',
  summary: 'reject a pending request: its place is refused',
  description: 'The rejection (approver and note) is chained as a deny; nothing is placed.',
  positionals: ID_ARG,
  flags: [NOTE_FLAG],
  json: '{"approval": ApprovalView}',
  exits: EXITS,
});

/** The definitions of `heddle approvals ...`, in reference order. */
export const APPROVALS_DEFS: readonly OperatorCommandDef[] = [
  APPROVALS_LS,
  APPROVALS_SHOW,
  APPROVALS_APPROVE,
  APPROVALS_REJECT,
];

/** `heddle approvals`: its subcommands. */
export const APPROVALS_GROUP: OperatorGroupDef = {
  name: 'approvals',
  summary: 'list, show, approve and reject the places the policy defers to an operator',
  subcommands: APPROVALS_DEFS,
};
