import { REQUEST_ID_RE } from '@heddle/protocol';

/** The media type of the place stream (`POST /v1/place` with `Accept: application/x-ndjson`). */
export const NDJSON = 'application/x-ndjson';

/** Largest accepted request body: 64 KiB (larger: `too_large`). */
export const MAX_BODY_BYTES: number = 64 * 1024;

/** The operator API token file in the controller home (64 lower-case hex characters, mode 0600). */
export const API_TOKEN_FILE = 'api.token';

/** What the running daemon writes in its home after it listens (mode 0600), removed on a clean shutdown. */
export const API_INFO_FILE = 'api.json';

/** The header naming a request's id, read from the client and echoed in every answer. */
export const REQUEST_ID_HEADER = 'x-request-id';

/** A request id: 1 to 128 of `[A-Za-z0-9._:-]`, starting with a letter or digit (`@heddle/protocol`'s). */
export const REQUEST_ID_PATTERN: RegExp = REQUEST_ID_RE;
