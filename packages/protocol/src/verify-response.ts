import type { JsonValue } from '@heddle/envelope';
import { DomainTag, equalBytes, isBytes, nodeIdFromPublicKey, parseJson, toHex } from '@heddle/envelope';
import { fastCtlResponse, parseFast } from './fast-shapes.js';
import { CTL_VERSION, MAX_CLOCK_SKEW_MS, MAX_MESSAGE_BYTES, MAX_PAYLOAD_DEPTH } from './limits.js';
import type { CtlRequest } from './request.js';
import { type CtlResponse, CtlResponseSchema } from './response.js';
import { ResponseError, type ResponseErrorCode } from './response-error.js';
import { checkCtlSignature, decodeSignedCtl } from './signed-ctl.js';

/** What `verifyResponse` checks a response against. */
export interface VerifyResponseOptions {
  /** The request that was sent (its nonce and method bind the answer). */
  readonly request: Pick<CtlRequest, 'method' | 'nonce' | 'expires_at_ms'>;
  /** The key expected for that node, when known (pinned, or learned on first use). */
  readonly expectedPublicKey?: Uint8Array;
  /** The current time in Unix ms; when given, an answer after the request's expiry plus skew is refused. */
  readonly now?: number;
}

/** A response that passed every check. */
export interface VerifiedResponse {
  /** The response, as parsed from the signed payload. */
  readonly response: CtlResponse;
  /** The responder's public key (its node id is `response.responder`). */
  readonly publicKey: Uint8Array;
}

function reject(code: ResponseErrorCode, message: string, field?: string, cause?: unknown): never {
  throw new ResponseError(code, message, {
    ...(field === undefined ? {} : { field }),
    ...(cause === undefined ? {} : { cause }),
  });
}

/**
 * Verifies a host's signed answer to `options.request`, in this order: envelope form and size
 * (`invalid_response`), key and signature hex (`signature`), key equal to the expected one when known
 * (`key_mismatch`), signature over `DomainTag.ctlResponse || UTF-8(payload)` (`signature`), strict
 * JSON, schema and version 1 (`invalid_response`), responder the node id of the key
 * (`responder_mismatch`), `request_nonce` the request's nonce (`nonce_mismatch`), method the request's
 * method (`method_mismatch`), and with `now`, not after the request's expiry plus the 30 s skew
 * (`expired`). Returns the response and key, or throws a {@link ResponseError}; never anything else
 * for any `signed` value. A signed refusal is a valid response (`outcome.status === "refused"`).
 */
export function verifyResponse(signed: unknown, options: VerifyResponseOptions): VerifiedResponse {
  const { request, expectedPublicKey, now } = options;
  if (expectedPublicKey !== undefined && !isBytes(expectedPublicKey, 32)) {
    throw new TypeError('options.expectedPublicKey must be 32 bytes');
  }
  try {
    return verifyInOrder(signed, request, expectedPublicKey, now);
  } catch (err) {
    if (err instanceof ResponseError) throw err;
    const why = err instanceof Error ? err.message : String(err);
    return reject('invalid_response', `the response could not be checked: ${why}`, undefined, err);
  }
}

function verifyInOrder(
  signed: unknown,
  request: VerifyResponseOptions['request'],
  expectedPublicKey: Uint8Array | undefined,
  now: number | undefined,
): VerifiedResponse {
  const decoded = decodeSignedCtl(signed);
  if (!decoded.ok) {
    const code =
      decoded.defect === 'key' || decoded.defect === 'signature' ? 'signature' : 'invalid_response';
    return reject(code, decoded.reason, decoded.field);
  }
  if (expectedPublicKey !== undefined && !equalBytes(expectedPublicKey, decoded.publicKey)) {
    const msg = `signed by key ${toHex(decoded.publicKey)}, expected ${toHex(expectedPublicKey)}`;
    return reject('key_mismatch', msg, 'public_key');
  }
  if (!checkCtlSignature(DomainTag.ctlResponse, decoded)) {
    return reject(
      'signature',
      'the response signature does not verify for this payload and public_key',
      'signature',
    );
  }
  let json: JsonValue;
  try {
    json = parseJson(decoded.payload, { maxBytes: MAX_MESSAGE_BYTES, maxDepth: MAX_PAYLOAD_DEPTH });
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return reject('invalid_response', `response payload is not strict JSON: ${why}`, 'payload', err);
  }
  if (
    typeof json === 'object' &&
    json !== null &&
    !Array.isArray(json) &&
    json.version !== undefined &&
    json.version !== CTL_VERSION
  ) {
    const v = JSON.stringify(json.version);
    return reject(
      'invalid_response',
      `unsupported response version ${v}; expected ${CTL_VERSION}`,
      'version',
    );
  }
  const parsed = parseFast(CtlResponseSchema, fastCtlResponse, json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.join('.') || '$';
    return reject('invalid_response', `response field ${field}: ${issue?.message ?? 'invalid'}`, field);
  }
  const response = parsed.data;
  const signerId = nodeIdFromPublicKey(decoded.publicKey);
  if (response.responder !== signerId) {
    const msg = `responder ${response.responder} is not the node id of the signing key (${signerId})`;
    return reject('responder_mismatch', msg, 'responder');
  }
  if (response.request_nonce !== request.nonce) {
    const msg = `request_nonce ${JSON.stringify(response.request_nonce)} is not the nonce sent (${request.nonce})`;
    return reject('nonce_mismatch', msg, 'request_nonce');
  }
  if (response.method !== request.method) {
    const msg = `method ${JSON.stringify(response.method)} is not the method called (${request.method})`;
    return reject('method_mismatch', msg, 'method');
  }
  if (now !== undefined && now > request.expires_at_ms + MAX_CLOCK_SKEW_MS) {
    const late = now - request.expires_at_ms;
    return reject('expired', `answer arrived ${late} ms after the request expired`, 'request_nonce');
  }
  return { response, publicKey: decoded.publicKey };
}
