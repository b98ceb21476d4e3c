import type { TransferProgress } from '@heddle/control-plane';

/** The answer of `GET /v1/health`: the controller's node id and counts. */
export interface ApiHealth {
  /** The controller's node id. */
  readonly controller: string;
  /** Known nodes. */
  readonly nodes: number;
  /** Placements still on their node (not lost, rescheduled, revoked or unloaded). */
  readonly instances: number;
  /** Unsettled decisions. */
  readonly unsettled: number;
}

/** The body of every failure of the operator API (`{"error": ApiErrorBody}`). */
export interface ApiErrorBody {
  /** A stable code (docs/operator-api.md, "Errors"). */
  readonly code: string;
  /** What went wrong and what to do. */
  readonly message: string;
  /** The input field at fault, when there is one. */
  readonly field?: string;
  /** Per-node reasons (node id to reason), for `unplaceable` and `refused`. */
  readonly reasons?: Readonly<Record<string, string>>;
}

/** One line of the `POST /v1/place` NDJSON stream. */
export type PlaceStreamEvent =
  | ({ readonly event: 'progress' } & TransferProgress)
  | { readonly event: 'result'; readonly result: unknown }
  | { readonly event: 'error'; readonly error: ApiErrorBody };

/** What the running daemon writes to `<home>/api.json` (mode 0600) after it listens. */
export interface ApiInfo {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** The daemon's process id. */
  readonly pid: number;
  /** The controller's node id. */
  readonly node_id: string;
}

/** The media type of the place stream. */
export const NDJSON = 'application/x-ndjson';

/** Largest accepted request body: 64 KiB. */
export const MAX_BODY_BYTES: number = 64 * 1024;
