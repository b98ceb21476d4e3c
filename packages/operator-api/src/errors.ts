import { PlaneError, StateError } from '@heddle/control-plane/contract';
import { HeddleError } from '@heddle/envelope';
import type { ApiErrorBody } from './answer-types.js';

/** HTTP status of each error code of the operator API (docs/operator-api.md, "Errors"). */
export const STATUS_OF_CODE: Readonly<Record<string, number>> = Object.freeze({
  invalid_input: 400,
  bad_json: 400,
  too_large: 400,
  unauthorized: 401,
  bad_auth_header: 401,
  unknown_token: 401,
  unknown_key: 401,
  stale_request: 401,
  bad_signature: 401,
  replayed_request: 401,
  forbidden: 403,
  unknown_operator: 404,
  operator_exists: 409,
  busy: 503,
  operators_invalid: 500,
  unknown_node: 404,
  unknown_instance: 404,
  unknown_alert: 404,
  unknown_event: 404,
  approval_not_found: 404,
  approval_already_decided: 409,
  approval_expired: 409,
  approvals_disabled: 409,
  job_invalid: 400,
  unknown_job: 404,
  unknown_job_version: 404,
  invalid_note: 400,
  invalid_operator: 400,
  not_found: 404,
  method_not_allowed: 405,
  node_exists: 409,
  key_mismatch: 409,
  duplicate_instance: 409,
  idempotency_conflict: 409,
  idempotency_in_progress: 409,
  package_invalid: 422,
  governance: 422,
  unplaceable: 422,
  refused: 502,
  unreachable: 502,
  indeterminate: 504,
  internal: 500,
  state: 500,
  store_unavailable: 503,
  store_conflict: 503,
});

/**
 * A failure the server adapter answers as is: its `code` maps to a status with
 * {@link STATUS_OF_CODE}. Handlers throw it (or a `PlaneError`) to refuse a request.
 */
export class ApiFailure extends HeddleError {
  /** Per-node reasons, when there are any. */
  readonly reasons: Readonly<Record<string, string>>;

  constructor(
    code: string,
    message: string,
    options: {
      field?: string | undefined;
      reasons?: Readonly<Record<string, string>> | undefined;
      cause?: unknown;
    } = {},
  ) {
    super(code, message, {
      ...(options.field === undefined ? {} : { field: options.field }),
      ...(options.cause === undefined ? {} : { cause: options.cause }),
    });
    this.reasons = options.reasons ?? {};
  }
}

/** What a failure is answered with: the status, the body, and whether it was unexpected (to be logged with its stack). */
export interface MappedError {
  readonly status: number;
  readonly error: ApiErrorBody;
  readonly unexpected: boolean;
}

/**
 * Maps anything thrown while handling a request to the API's error: a `PlaneError` or `ApiFailure`
 * keeps its code (and field and reasons), a `StateError` is `state` (but `store_unavailable` and
 * `store_conflict` of a server database keep their code, status 503), anything else is `internal`
 * with a message that leaks nothing (the details go to the log).
 */
export function mapError(err: unknown): MappedError {
  // A server database that is down or kept losing conflicts: a refusal to retry, not a fault here.
  if (err instanceof StateError && (err.code === 'store_unavailable' || err.code === 'store_conflict')) {
    return {
      status: 503,
      error: { code: err.code, message: `the state store cannot serve this now (retry): ${err.message}` },
      unexpected: false,
    };
  }
  if (err instanceof StateError) {
    return {
      status: 500,
      error: { code: 'state', message: `the state store failed (${err.code}): ${err.message}` },
      unexpected: true,
    };
  }
  if (err instanceof HeddleError) {
    const status = STATUS_OF_CODE[err.code];
    if (status !== undefined) {
      const reasons = err instanceof ApiFailure || err instanceof PlaneError ? err.reasons : undefined;
      return {
        status,
        error: {
          code: err.code,
          message: err.message,
          ...(err.field === undefined ? {} : { field: err.field }),
          ...(reasons === undefined || (Object.keys(reasons).length === 0 && err.code !== 'unplaceable')
            ? {}
            : { reasons }),
        },
        unexpected: status >= 500 && status !== 502 && status !== 503 && status !== 504,
      };
    }
  }
  return {
    status: 500,
    error: {
      code: 'internal',
      message: 'internal error (see the controller log); the operation may not have completed: check ps',
    },
    unexpected: true,
  };
}
