import { REQUEST_ID_RE, type RefusalCode } from '@heddle/protocol';

/**
 * What a {@link HostService} tells `onCall` of each request it answered: for the daemon's request
 * log and its metrics. Nothing secret: ids, the method, the refusal code, the time taken.
 */
export interface HostCallEvent {
  /** The method the transport named for the call. */
  readonly method: string;
  /** True when the request passed verification (signature, target, freshness, nonce, policy). */
  readonly authenticated: boolean;
  /** `ok`, or `refused` with the refusal's code. */
  readonly outcome: 'ok' | 'refused';
  readonly code: RefusalCode | null;
  /** Milliseconds from receipt to the signed answer. */
  readonly ms: number;
  /** The verified requester's node id, the decision id and the operator's request id, when known. */
  readonly requester: string | null;
  readonly decision_id: string | null;
  readonly request_id: string | null;
  /** The instance a successful place, load or instance method answered about. */
  readonly instance_id: string | null;
}

/** The mutable record {@link HostCallEvent} is built from while a call is handled. */
export interface CallNote {
  authenticated: boolean;
  code: RefusalCode | null;
  requester: string | null;
  decision_id: string | null;
  request_id: string | null;
  instance_id: string | null;
}

/** A note for a call not yet verified. */
export function newCallNote(): CallNote {
  return {
    authenticated: false,
    code: null,
    requester: null,
    decision_id: null,
    request_id: null,
    instance_id: null,
  };
}

/** The request id of a verified request's body, when it carries a well-formed one (only place and load may). */
export function requestIdOf(body: unknown): string | null {
  if (typeof body !== 'object' || body === null || !('request_id' in body)) return null;
  const v = body.request_id;
  return typeof v === 'string' && REQUEST_ID_RE.test(v) ? v : null;
}

/** The `instance_id` of a successful answer, when it has one. */
export function instanceIdOf(answer: unknown): string | null {
  if (typeof answer !== 'object' || answer === null || !('instance_id' in answer)) return null;
  const v = answer.instance_id;
  return typeof v === 'string' ? v : null;
}
