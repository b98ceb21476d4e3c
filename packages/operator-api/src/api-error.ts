import { HeddleError } from '@heddle/envelope';

/**
 * What {@link ApiClient} rejects with: a failure the operator API answered (its `code`, `message`,
 * `field` and `reasons`, and the HTTP `status`), or one the client found itself (then `status` is 0,
 * or the status of the broken answer):
 * - `controller_not_running`: the daemon cannot be found (no `api.json`) or does not answer;
 * - `unauthorized`: the token file cannot be read (or the daemon refused the token);
 * - `timeout`: no answer within the call's timeout;
 * - `outcome_unknown`: a request that changes something was sent and its answer was lost (a reset
 *   connection, a broken place stream): it may have been done;
 * - `bad_answer`: the daemon answered something the route's answer schema refuses (`field` names
 *   where), or no JSON at all.
 */
export class ApiError extends HeddleError {
  /** The HTTP status (0 when there was no answer). */
  readonly status: number;
  /** Per-node reasons (node id to reason), for `unplaceable` and `refused`. */
  readonly reasons: Readonly<Record<string, string>>;

  constructor(
    code: string,
    message: string,
    options: {
      status?: number | undefined;
      field?: string | undefined;
      reasons?: Readonly<Record<string, string>> | undefined;
      cause?: unknown;
    } = {},
  ) {
    super(code, message, {
      ...(options.field === undefined ? {} : { field: options.field }),
      ...(options.cause === undefined ? {} : { cause: options.cause }),
    });
    this.status = options.status ?? 0;
    this.reasons = options.reasons ?? {};
  }
}
