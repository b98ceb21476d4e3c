import type { JsonValue } from '@heddle/envelope';
import {
  DomainTag,
  HEX32_RE,
  HeddleError,
  isNodeId,
  nodeIdFromPublicKey,
  parseJson,
  toHex,
} from '@heddle/envelope';
import type { ControllerPolicy } from './controller-policy.js';
import { fastRequestForm, parseFast, RequestFormSchema } from './fast-shapes.js';
import { hostClockSuffix } from './host-clock.js';
import {
  CTL_VERSION,
  MAX_CLOCK_SKEW_MS,
  MAX_LIFETIME_MS,
  MAX_MESSAGE_BYTES,
  MAX_PAYLOAD_DEPTH,
} from './limits.js';
import { ANY_TARGET, CTL_METHODS, DESCRIBE_METHOD, isCtlMethod, mutates } from './methods.js';
import type { NonceGuard } from './nonce-guard.js';
import { Refusal, type RefusalCode } from './refusal.js';
import type { CtlRequest } from './request.js';
import { checkCtlSignature, decodeSignedCtl, type SignedCtl } from './signed-ctl.js';

/** What `verifyRequest` needs from the host. */
export interface VerifyRequestOptions {
  /** This host's node id: the only target accepted besides `"*"` with describe. */
  readonly nodeId: string;
  /** The current time in Unix ms (the host's clock; read by the caller, never here). */
  readonly now: number;
  /** Who may call what. */
  readonly policy: ControllerPolicy;
  /** This host's replay memory; the nonce of an accepted request is recorded in it. */
  readonly nonces: NonceGuard;
  /** The method named by the transport (the frame header), which must equal the signed method. */
  readonly expectedMethod?: string;
  /**
   * A mutating request issued before this time (Unix ms) is refused with `expired` (check 6d). A host
   * whose nonce journal was lost sets it to its start-up time plus the clock skew, so that no request
   * it may have accepted before the restart can act again.
   */
  readonly notIssuedBeforeMs?: number;
}

/** A request that passed every check. */
export interface VerifiedRequest {
  /** The request, as parsed from the signed payload. */
  readonly request: CtlRequest;
  /** The signer's public key (its node id is `request.requester`). */
  readonly publicKey: Uint8Array;
  /** The envelope as received (the exact payload that was verified). */
  readonly signed: SignedCtl;
}

function refuse(code: RefusalCode, reason: string, field?: string, cause?: unknown): never {
  throw new Refusal(code, reason, {
    ...(field === undefined ? {} : { field }),
    ...(cause === undefined ? {} : { cause }),
  });
}

/**
 * Verifies a signed control request for this host, in the protocol's order, and records its nonce.
 * Returns the parsed request and the signer's key, or throws a {@link Refusal} (always with
 * `authenticated: false`). The order, with the code of each failure:
 *
 * 1. envelope form (`invalid_request`), payload size <= 256 KiB (`invalid_request`), payload text
 *    (`invalid_request`), hex of `public_key` and `signature` (`signature`);
 * 2. Ed25519 signature over `DomainTag.ctlRequest || UTF-8(payload)` (`signature`);
 * 3. strict JSON and schema (`invalid_request`), version 1 (`invalid_request`), known method
 *    (`unknown_method`), transport method equal to the signed one (`invalid_request`), decision id on
 *    a mutating method (`invalid_request`);
 * 4. requester is the node id of the signing key (`signature`);
 * 5. target is this node, or `"*"` with describe (`not_for_me`);
 * 6. time window: not expired (`expired`), issued at most 30 s ahead (`expired`), lifetime 1 ms to
 *    300 s (`invalid_request`), a mutating request not issued before `notIssuedBeforeMs` (`expired`);
 * 7. nonce is 32 lower-case hex (`invalid_request`);
 * 8. the policy authorises requester and method (`unauthorized`);
 * 9. nonce not seen, then recorded (`replay`; also `replay` when the nonce memory is full, or when
 *    the nonce of a mutating method could not be written to the memory's journal).
 *
 * The nonce is recorded last, so a forged, misaddressed, stale or unauthorised request cannot burn one.
 * Throws a TypeError only for malformed `options` (a host bug), never for any `signed` value.
 */
export function verifyRequest(signed: unknown, options: VerifyRequestOptions): VerifiedRequest {
  const { nodeId, now, policy, nonces, expectedMethod, notIssuedBeforeMs } = options;
  if (!isNodeId(nodeId)) throw new TypeError('options.nodeId must be a node id');
  if (!Number.isSafeInteger(now) || now < 0)
    throw new TypeError('options.now must be a non-negative integer');
  try {
    return verifyInOrder(signed, nodeId, now, policy, nonces, expectedMethod, notIssuedBeforeMs ?? 0);
  } catch (err) {
    if (err instanceof Refusal) throw err;
    const why = err instanceof Error ? err.message : String(err);
    return refuse('invalid_request', `the request could not be checked: ${why}`, undefined, err);
  }
}

function verifyInOrder(
  signed: unknown,
  nodeId: string,
  now: number,
  policy: ControllerPolicy,
  nonces: NonceGuard,
  expectedMethod: string | undefined,
  notIssuedBeforeMs: number,
): VerifiedRequest {
  // 1. Size and decoding.
  const decoded = decodeSignedCtl(signed);
  if (!decoded.ok) {
    const code = decoded.defect === 'key' || decoded.defect === 'signature' ? 'signature' : 'invalid_request';
    return refuse(code, decoded.reason, decoded.field);
  }
  // 2. Signature.
  if (!checkCtlSignature(DomainTag.ctlRequest, decoded)) {
    return refuse('signature', 'the signature does not verify for this payload and public_key', 'signature');
  }
  // 3. JSON and schema, then version, method, transport method, decision id.
  let json: JsonValue;
  try {
    json = parseJson(decoded.payload, { maxBytes: MAX_MESSAGE_BYTES, maxDepth: MAX_PAYLOAD_DEPTH });
  } catch (err) {
    const field = err instanceof HeddleError ? err.field : undefined;
    const why = err instanceof Error ? err.message : String(err);
    return refuse('invalid_request', `payload is not strict JSON: ${why}`, field ?? 'payload', err);
  }
  const shape = parseFast(RequestFormSchema, fastRequestForm, json);
  if (!shape.success) {
    const issue = shape.error.issues[0];
    const field = issue?.path.join('.') || '$';
    return refuse('invalid_request', `request field ${field}: ${issue?.message ?? 'invalid'}`, field);
  }
  const r = shape.data;
  if (r.version !== CTL_VERSION) {
    return refuse(
      'invalid_request',
      `unsupported version ${r.version}; this node speaks ${CTL_VERSION}`,
      'version',
    );
  }
  if (!isCtlMethod(r.method)) {
    const known = CTL_METHODS.join(', ');
    return refuse('unknown_method', `method ${JSON.stringify(r.method)} is not one of ${known}`, 'method');
  }
  const method = r.method;
  if (expectedMethod !== undefined && expectedMethod !== method) {
    const msg = `transport method ${JSON.stringify(expectedMethod)} differs from the signed method ${method}`;
    return refuse('invalid_request', msg, 'method');
  }
  if (mutates(method) && r.decision_id === undefined) {
    const msg = `${method} changes state and must carry decision_id (the chain hash of the decision)`;
    return refuse('invalid_request', msg, 'decision_id');
  }
  // 4. The requester is the signer.
  const signerId = nodeIdFromPublicKey(decoded.publicKey);
  if (r.requester !== signerId) {
    const msg = `requester ${JSON.stringify(r.requester)} is not the node id of the signing key (${signerId})`;
    return refuse('signature', msg, 'requester');
  }
  // 5. Addressed to this node.
  if (r.target === ANY_TARGET) {
    if (method !== DESCRIBE_METHOD) {
      return refuse(
        'not_for_me',
        `target "*" is only accepted for ${DESCRIBE_METHOD}, not ${method}`,
        'target',
      );
    }
  } else if (r.target !== nodeId) {
    return refuse('not_for_me', `target ${JSON.stringify(r.target)} is not this node (${nodeId})`, 'target');
  }
  // 6. Time window.
  if (now >= r.expires_at_ms) {
    return refuse(
      'expired',
      `request expired ${now - r.expires_at_ms} ms ago (expires_at_ms) ${hostClockSuffix(now)}`,
      'expires_at_ms',
    );
  }
  if (r.issued_at_ms - now > MAX_CLOCK_SKEW_MS) {
    const ahead = r.issued_at_ms - now;
    const msg = `issued_at_ms is ${ahead} ms ahead of this node's clock; at most ${MAX_CLOCK_SKEW_MS} ms is tolerated ${hostClockSuffix(now)}`;
    return refuse('expired', msg, 'issued_at_ms');
  }
  const lifetime = r.expires_at_ms - r.issued_at_ms;
  if (lifetime <= 0) {
    return refuse('invalid_request', 'expires_at_ms must be later than issued_at_ms', 'expires_at_ms');
  }
  if (lifetime > MAX_LIFETIME_MS) {
    const msg = `lifetime expires_at_ms - issued_at_ms = ${lifetime} ms exceeds the maximum ${MAX_LIFETIME_MS} ms`;
    return refuse('invalid_request', msg, 'expires_at_ms');
  }
  if (mutates(method) && r.issued_at_ms < notIssuedBeforeMs) {
    const msg = `issued_at_ms ${r.issued_at_ms} is before ${notIssuedBeforeMs}: this host lost its nonce journal and refuses changes issued before its restart plus the clock skew`;
    return refuse('expired', msg, 'issued_at_ms');
  }
  // 7. Nonce format.
  if (!HEX32_RE.test(r.nonce)) {
    return refuse('invalid_request', 'nonce must be 32 lower-case hex characters', 'nonce');
  }
  // 8. An authorised controller.
  let authorised: boolean;
  try {
    authorised = policy.isAuthorized({ requester: r.requester, publicKey: decoded.publicKey, method });
  } catch (err) {
    return refuse('unauthorized', 'the controller policy failed; refusing', 'requester', err);
  }
  if (authorised !== true) {
    const key = toHex(decoded.publicKey);
    return refuse(
      'unauthorized',
      `requester ${r.requester} (key ${key}) may not call ${method} here`,
      'requester',
    );
  }
  // 9. Nonce not seen; recorded last (written to the journal first for a mutating method).
  const verdict = nonces.record(r.nonce, r.expires_at_ms, now, mutates(method));
  if (verdict === 'replay') return refuse('replay', `nonce ${r.nonce} was already used`, 'nonce');
  if (verdict === 'full') {
    const msg = `nonce memory is full (${nonces.capacity} unexpired nonces); refusing until some expire`;
    return refuse('replay', msg, 'nonce');
  }
  if (verdict === 'unavailable') {
    const msg = 'the nonce could not be written to the nonce journal; refusing rather than risk a replay';
    return refuse('replay', msg, 'nonce');
  }
  const request: CtlRequest = {
    version: 1,
    method,
    requester: r.requester,
    target: r.target,
    nonce: r.nonce,
    issued_at_ms: r.issued_at_ms,
    expires_at_ms: r.expires_at_ms,
    ...(r.decision_id === undefined ? {} : { decision_id: r.decision_id }),
    body: r.body,
  };
  const envelope: SignedCtl = {
    payload: decoded.payload,
    public_key: toHex(decoded.publicKey),
    signature: toHex(decoded.signature),
  };
  return { request, publicKey: decoded.publicKey, signed: envelope };
}
