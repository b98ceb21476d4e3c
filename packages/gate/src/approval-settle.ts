import type { ApprovalRedecision } from './approval-resolution.js';
import { resolution } from './approval-resolution.js';
import type { ApprovalRequest } from './approval-store.js';
import { GateError } from './errors.js';
import { DECISION_SOURCE, type DecisionRecorder, decisionPayload } from './recorder.js';

/** Refuses a malformed operator (`invalid_operator`) or note (`invalid_note`) of an approval or rejection. */
export function checkSettlement(operator: unknown, note: unknown): void {
  if (typeof operator !== 'string' || operator.length === 0 || operator.length > 256) {
    throw new GateError('invalid_operator', 'operator must be a string of 1..256 characters', {
      field: 'operator',
    });
  }
  if (note !== undefined && (typeof note !== 'string' || note.length > 2048)) {
    throw new GateError('invalid_note', 'note must be a string of at most 2048 characters', {
      field: 'note',
    });
  }
}

/**
 * Chains the decision a settled request comes to (see `resolution`) under its action, naming the
 * defer event it settles and, for a re-decided approval, the policy that re-decided it. Resolves with
 * the event hash; rejects with `decision_not_recorded`.
 */
export async function chainSettlement(
  recorder: DecisionRecorder,
  next: ApprovalRequest,
  policy?: ApprovalRedecision['policy'],
): Promise<string> {
  try {
    const ev = await recorder.append(
      DECISION_SOURCE,
      next.action,
      decisionPayload({
        agent: next.agent,
        action: next.action,
        decision: resolution(next),
        teardown: next.teardown,
        context: next.context,
        ...(policy === undefined ? {} : { policy }),
        ...(next.defer_event === undefined ? {} : { defer_event: next.defer_event }),
      }),
    );
    return ev.hash;
  } catch (err) {
    throw new GateError('decision_not_recorded', `could not chain the ${next.state} approval ${next.id}`, {
      cause: err,
    });
  }
}
