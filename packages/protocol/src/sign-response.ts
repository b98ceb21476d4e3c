import {
  DomainTag,
  HEX32_RE,
  type KeyPair,
  nodeIdFromPublicKey,
  parseJson,
  utf8Length,
} from '@heddle/envelope';
import { fastCtlResponse, parseFast } from './fast-shapes.js';
import { MAX_MESSAGE_BYTES, MAX_PAYLOAD_DEPTH, MAX_REASON_LENGTH } from './limits.js';
import { ProtocolError } from './protocol-error.js';
import { Refusal } from './refusal.js';
import {
  type CtlOutcome,
  type CtlResponse,
  CtlResponseSchema,
  okOutcome,
  RESPONSE_METHOD_RE,
  refusedOutcome,
} from './response.js';
import { decodeSignedCtl, type SignedCtl, signCtlMessage } from './signed-ctl.js';

/** The two request fields a response is bound to. */
export interface ResponseBinding {
  /** The method of the request answered. */
  readonly method: string;
  /** The request's nonce (`""` when it carried none that could be read). */
  readonly nonce: string;
}

/**
 * Makes a refusal reason safe to sign: lone surrogates replaced, at most
 * {@link MAX_REASON_LENGTH} characters (longer reasons are cut and end with an ellipsis).
 */
export function boundReason(reason: string): string {
  const text = String(reason).toWellFormed();
  if (utf8Length(text) <= MAX_REASON_LENGTH) return text;
  // Cut at a code point boundary so that the text and the ellipsis (3 bytes) fit the byte limit.
  let bytes = 0;
  let end = 0;
  for (const ch of text) {
    const n = utf8Length(ch);
    if (bytes + n > MAX_REASON_LENGTH - 3) break;
    bytes += n;
    end += ch.length;
  }
  return `${text.slice(0, end)}\u2026`;
}

/**
 * Signs a host's answer to `request` (a verified `CtlRequest`, or the fields of {@link claimedRequest}
 * for a request that failed verification) with the host's key. `outcome` is a {@link CtlOutcome} or a
 * {@link Refusal} (whose `authenticated` flag is carried into the signed outcome); reasons are bounded
 * with {@link boundReason}. The responder is the node id of
 * `keyPair`. Throws `ProtocolError` `invalid_response` (naming the field) when the method or nonce does
 * not have the response's form, or `canonical_json` when the result cannot be canonicalised or the
 * payload would exceed 256 KiB.
 */
export function signResponse(
  request: ResponseBinding,
  outcome: CtlOutcome | Refusal,
  keyPair: KeyPair,
): SignedCtl {
  const out: CtlOutcome =
    outcome instanceof Refusal || outcome.status === 'refused'
      ? refusedOutcome(outcome.code, boundReason(outcome.reason), outcome.authenticated)
      : okOutcome(outcome.result);
  const response: CtlResponse = {
    version: 1,
    method: request.method,
    responder: nodeIdFromPublicKey(keyPair.publicKey),
    request_nonce: request.nonce,
    outcome: out,
  };
  const parsed = parseFast(CtlResponseSchema, fastCtlResponse, response);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.join('.') || '$';
    throw new ProtocolError('invalid_response', `response field ${field}: ${issue?.message ?? 'invalid'}`, {
      field,
    });
  }
  return signCtlMessage(DomainTag.ctlResponse, response, keyPair);
}

/**
 * The method and nonce a request claims, read without verifying it, so that a host can bind its
 * signed refusal of an unverifiable request to what the sender will look for. The transport's method
 * wins when it has the right form; a nonce that is not 32 lower-case hex becomes `""`. Never throws.
 * Nothing read here is trusted: it only labels the refusal.
 */
export function claimedRequest(signed: unknown, headerMethod?: string): ResponseBinding {
  let method = '';
  let nonce = '';
  try {
    const decoded = decodeSignedCtl(signed);
    const payload =
      decoded.ok || decoded.defect === 'key' || decoded.defect === 'signature'
        ? // cast: decodeSignedCtl got past the payload checks, so `payload` is a string.
          (signed as { payload: string }).payload
        : undefined;
    if (payload !== undefined) {
      const json = parseJson(payload, { maxBytes: MAX_MESSAGE_BYTES, maxDepth: MAX_PAYLOAD_DEPTH });
      if (typeof json === 'object' && json !== null && !Array.isArray(json)) {
        if (typeof json.method === 'string' && RESPONSE_METHOD_RE.test(json.method)) method = json.method;
        if (typeof json.nonce === 'string' && HEX32_RE.test(json.nonce)) nonce = json.nonce;
      }
    }
  } catch {
    // An unreadable payload claims nothing.
  }
  if (typeof headerMethod === 'string' && RESPONSE_METHOD_RE.test(headerMethod)) method = headerMethod;
  return { method, nonce };
}
