import { readFileSync } from 'node:fs';
import { typeExportNames } from '@heddle/envelope/testing';
import { describe, expect, it } from 'vitest';
import * as api from './index.js';

/** The value exports of the main entry, sorted. */
const VALUES: readonly string[] = [
  'ACTIONS',
  'ALL_ACTIONS',
  'ApprovalQueue',
  'BUILTIN_RULES',
  'COST_SCALE',
  'DECISION_SOURCE',
  'DEFAULT_POLICY',
  'FileApprovalStore',
  'Gate',
  'GateContextSchema',
  'GateError',
  'ManualClock',
  'MemoryApprovalStore',
  'PACKAGE_TRUST_LEVELS',
  'PolicySchema',
  'REFUSE_KIND',
  'RevocationInputSchema',
  'RevocationSet',
  'STORE_PIN_RESOURCE_COST',
  'ValidationError',
  'checkRevocations',
  'compilePolicy',
  'contextForChain',
  'decide',
  'decideTeardown',
  'decisionKind',
  'decisionPayload',
  'evaluate',
  'explain',
  'gateContextFor',
  'loadPolicyFile',
  'mismatch',
  'parseContext',
  'parsePolicy',
  'parsePolicyText',
  'policyForChain',
  'safeParseContext',
  'systemClock',
];

/** The names in the type-only export clauses (`export type { ... }`, `type X` inside `export { ... }`) of the main entry, sorted. */
const TYPES: readonly string[] = [
  'Action',
  'ApprovalDecider',
  'ApprovalInput',
  'ApprovalOutcome',
  'ApprovalQueueOptions',
  'ApprovalRedecision',
  'ApprovalRef',
  'ApprovalRequest',
  'ApprovalReservation',
  'ApprovalState',
  'ApprovalStore',
  'Clock',
  'CompiledPolicy',
  'CompiledRule',
  'ContextParseResult',
  'Decision',
  'DecisionRecord',
  'DecisionRecorder',
  'DeferDecision',
  'DenyDecision',
  'Evaluation',
  'FieldIssue',
  'GateContext',
  'GateOptions',
  'GatedWorkload',
  'HostContextFacts',
  'PackageTrust',
  'PermitDecision',
  'Policy',
  'PolicyRule',
  'PreparedContext',
  'RecordedDecision',
  'RevocationFinding',
  'RevocationInput',
  'RuleEffect',
  'RuleTrace',
  'WaitOptions',
  'Waiver',
];

describe('@heddle/gate main entry exports', () => {
  it('value exports change only on purpose: update this list when you mean to change the API', () => {
    expect(Object.keys(api).sort()).toEqual(VALUES);
  });

  it('type exports change only on purpose: update this list when you mean to change the API', () => {
    expect(typeExportNames(readFileSync(new URL('./index.ts', import.meta.url), 'utf8'))).toEqual(TYPES);
  });
});
