import { type HttpAnswer, httpRequest } from './http-request.js';
import { REQUEST_ID_HEADER } from './plain-constants.js';

/** One request to the operator API, as {@link sendOperatorRequest} sends it. */
export interface OperatorRequest {
  /** The API's base URL (`http://127.0.0.1:<port>`, no trailing slash). */
  readonly url: string;
  readonly method: string;
  /** The route's path (with its query, if any). */
  readonly path: string;
  /** The `Authorization` header value (`Bearer <token>`, or a signed `Heddle-Ed25519` one). */
  readonly authorization: string;
  /** The JSON body, already serialised (absent: no body). */
  readonly body?: string | undefined;
  /** The `Accept` header (default `application/json`). */
  readonly accept?: string | undefined;
  /** Sent as `x-request-id`. */
  readonly requestId?: string | undefined;
  /** Time to wait for the answer's headers (0: no limit). */
  readonly timeoutMs: number;
  /** For `https://`: the pinned certificate fingerprint. */
  readonly fingerprint?: string | undefined;
}

/**
 * Sends one operator API request and resolves with the raw answer (rejects with `HttpFailure`). The
 * one place requests are put on the wire: `ApiClient` sends every request through it, and a caller
 * that sends before it loads the validating client (the CLI's `heddle place`) sends the same bytes
 * and hands the answer to `ApiClient.placeAnswer`.
 */
export function sendOperatorRequest(r: OperatorRequest): Promise<HttpAnswer> {
  return httpRequest(`${r.url}${r.path}`, {
    method: r.method,
    headers: {
      authorization: r.authorization,
      accept: r.accept ?? 'application/json',
      ...(r.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(r.requestId === undefined ? {} : { [REQUEST_ID_HEADER]: r.requestId }),
    },
    ...(r.body === undefined ? {} : { body: r.body }),
    timeoutMs: r.timeoutMs,
    fingerprint: r.fingerprint,
  });
}
