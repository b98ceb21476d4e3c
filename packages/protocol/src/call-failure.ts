import { HeddleError } from '@heddle/envelope';
import { mutates } from './methods.js';
import type { CtlRefused } from './response.js';

/**
 * How a controller's call failed:
 * - `refused`: a valid signed refusal came back, and the host did not do it (see {@link refusalKind});
 * - `unreachable`: the request never left (connect failed), or it cannot have changed state: safe to
 *   try elsewhere;
 * - `indeterminate`: a state-changing request was sent and no valid answer came back (timeout, dropped
 *   connection, a response that failed `verifyResponse`): the host may have acted. Never retried
 *   elsewhere before reconciling with that node (`workload.status`).
 */
export type CallFailureKind = 'refused' | 'unreachable' | 'indeterminate';

/**
 * The class of a call that produced no valid answer: `unreachable` when the request was never sent
 * or `method` does not change state, `indeterminate` when a mutating request may have been delivered.
 */
export function lostCallKind(method: string, sent: boolean): 'unreachable' | 'indeterminate' {
  return sent && mutates(method) ? 'indeterminate' : 'unreachable';
}

/**
 * The class of a call answered by a valid signed refusal: `refused` (the host did not act) when the
 * refusal is authenticated or the method does not change state; `indeterminate` when a mutating call
 * got an unauthenticated refusal (a `replay`, `expired`, `signature`, ... of a copy: another copy of
 * the same request may have been accepted and acted on first).
 */
export function refusalKind(method: string, refusal: CtlRefused): 'refused' | 'indeterminate' {
  return mutates(method) && !refusal.authenticated ? 'indeterminate' : 'refused';
}

/** A failed call, classed by {@link CallFailureKind} (its `code`). */
export class CallFailure extends HeddleError {
  /** The class of the failure. */
  declare readonly code: CallFailureKind;
  /** The host's refusal, for `refused`. */
  readonly refusal: CtlRefused | undefined;

  constructor(
    code: CallFailureKind,
    message: string,
    options?: { refusal?: CtlRefused; cause?: unknown; field?: string },
  ) {
    super(code, `${code}: ${message}`, {
      ...(options?.cause === undefined ? {} : { cause: options.cause }),
      ...(options?.field === undefined ? {} : { field: options.field }),
    });
    this.refusal = options?.refusal;
  }

  /** A `refused` failure carrying the host's signed refusal. */
  static refused(refusal: CtlRefused): CallFailure {
    return new CallFailure('refused', `${refusal.code}: ${refusal.reason}`, { refusal });
  }
}
