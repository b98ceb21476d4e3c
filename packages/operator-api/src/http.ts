// The `./http` entry: sending operator API requests without the validating client (no zod, no route
// table), for a caller that sends first and validates the answer once `ApiClient` is loaded.
export type { HttpAnswer, HttpRequestOptions } from './http-request.js';
export { HttpFailure, httpRequest } from './http-request.js';
export type { OperatorRequest } from './operator-request.js';
export { sendOperatorRequest } from './operator-request.js';
export { API_INFO_FILE, API_TOKEN_FILE, NDJSON, PLACE_PATH, REQUEST_ID_HEADER } from './plain-constants.js';
