export type { ApprovalQueueOptions, ApprovalReservation } from './approval-queue.js';
export { ApprovalQueue } from './approval-queue.js';
export type { ApprovalDecider, ApprovalRedecision } from './approval-resolution.js';
export type {
  ApprovalInput,
  ApprovalOutcome,
  ApprovalRequest,
  ApprovalState,
  ApprovalStore,
} from './approval-store.js';
export { MemoryApprovalStore } from './approval-store.js';
export type { Clock } from './clock.js';
export { ManualClock, systemClock } from './clock.js';
export type { CompiledPolicy, CompiledRule, PreparedContext } from './compile.js';
export { compilePolicy, mismatch, policyForChain } from './compile.js';
export type { ContextParseResult, GateContext } from './context.js';
export { contextForChain, GateContextSchema, parseContext, safeParseContext } from './context.js';
export type { Evaluation } from './decide.js';
export { decide, decideTeardown, evaluate } from './decide.js';
export type {
  ApprovalRef,
  Decision,
  DeferDecision,
  DenyDecision,
  PermitDecision,
  Waiver,
} from './decision.js';
export { BUILTIN_RULES } from './decision.js';
export { DEFAULT_POLICY } from './default-policy.js';
export type { FieldIssue } from './errors.js';
export { GateError, ValidationError } from './errors.js';
export type { RuleTrace } from './explain.js';
export { explain } from './explain.js';
export { FileApprovalStore } from './file-approval-store.js';
export type { GateOptions, WaitOptions } from './gate.js';
export { Gate } from './gate.js';
export type { Action, PackageTrust } from './levels.js';
export { ACTIONS, ALL_ACTIONS, COST_SCALE, PACKAGE_TRUST_LEVELS } from './levels.js';
export type { Policy, PolicyRule, RuleEffect } from './policy.js';
export { loadPolicyFile, PolicySchema, parsePolicy, parsePolicyText } from './policy.js';
export type { DecisionRecord, DecisionRecorder, RecordedDecision } from './recorder.js';
export { DECISION_SOURCE, decisionKind, decisionPayload, REFUSE_KIND } from './recorder.js';
export type { RevocationFinding, RevocationInput } from './revocation.js';
export { checkRevocations, RevocationInputSchema, RevocationSet } from './revocation.js';
export type { GatedWorkload, HostContextFacts } from './workload-context.js';
export { gateContextFor, STORE_PIN_RESOURCE_COST } from './workload-context.js';
