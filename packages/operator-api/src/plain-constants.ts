// Constants of the operator API that need no validation code: the `./http` entry imports them
// without loading zod or the route table (re-exported from the main entry by constants.ts).

/** The media type of the place stream (`POST /v1/place` with `Accept: application/x-ndjson`). */
export const NDJSON = 'application/x-ndjson';

/** The operator API token file in the controller home (64 lower-case hex characters, mode 0600). */
export const API_TOKEN_FILE = 'api.token';

/** What the running daemon writes in its home after it listens (mode 0600), removed on a clean shutdown. */
export const API_INFO_FILE = 'api.json';

/** The header naming a request's id, read from the client and echoed in every answer. */
export const REQUEST_ID_HEADER = 'x-request-id';

/** The path of `POST /v1/place` (the route table's `routePath('place')`, checked by a test). */
export const PLACE_PATH = '/v1/place';
