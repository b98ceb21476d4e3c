import { REQUEST_ID_RE } from '@heddle/protocol';

export { API_INFO_FILE, API_TOKEN_FILE, NDJSON, REQUEST_ID_HEADER } from './plain-constants.js';

/** Largest accepted request body: 64 KiB (larger: `too_large`). */
export const MAX_BODY_BYTES: number = 64 * 1024;

/** A request id: 1 to 128 of `[A-Za-z0-9._:-]`, starting with a letter or digit (`@heddle/protocol`'s). */
export const REQUEST_ID_PATTERN: RegExp = REQUEST_ID_RE;
