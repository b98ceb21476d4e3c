import { randomBytes } from 'node:crypto';
import {
  DomainTag,
  HEX64_RE,
  isJsonObject,
  isNodeId,
  type KeyPair,
  nodeIdFromPublicKey,
} from '@heddle/envelope';
import { fastCtlRequest, parseFast } from './fast-shapes.js';
import { DEFAULT_REQUEST_TTL_MS, MAX_LIFETIME_MS, NONCE_HEX_LENGTH } from './limits.js';
import { ANY_TARGET, type CtlMethod, DESCRIBE_METHOD, isCtlMethod, mutates } from './methods.js';
import { ProtocolError } from './protocol-error.js';
import { type CtlBody, type CtlRequest, CtlRequestSchema } from './request.js';
import { type SignedCtl, signCtlMessage } from './signed-ctl.js';

/** Arguments of {@link createRequest}. */
export interface CreateRequestInput {
  /** The method to call. */
  readonly method: CtlMethod;
  /** The sender's node id (the node id of the key that will sign). */
  readonly requester: string;
  /** The host's node id, or `"*"` for `workload.describe`. */
  readonly target: string;
  /** Method arguments (default `{}`). */
  readonly body?: CtlBody;
  /** Chain hash of the decision (64 lower-case hex); required for mutating methods. */
  readonly decisionId?: string;
  /** The current time in Unix ms (becomes `issued_at_ms`). */
  readonly now: number;
  /** Lifetime in ms, 1 to 300,000 (default 290,000). */
  readonly ttlMs?: number;
}

// Nonces come from one 4 KiB draw of the operating system's random source, 256 nonces at a time,
// rather than one system call each. Every byte is used for one nonce only, then zeroed.
const POOL_BYTES = 4096;
let pool: Buffer = Buffer.alloc(0);
let poolAt = 0;

function freshNonce(): string {
  const n = NONCE_HEX_LENGTH / 2;
  if (poolAt + n > pool.length) {
    pool = randomBytes(POOL_BYTES);
    poolAt = 0;
  }
  const nonce = pool.toString('hex', poolAt, poolAt + n);
  pool.fill(0, poolAt, poolAt + n);
  poolAt += n;
  return nonce;
}

function invalid(field: string, message: string): never {
  throw new ProtocolError('invalid_request', message, { field });
}

/**
 * Builds a version 1 request with a fresh random nonce (16 bytes from `node:crypto`, drawn in
 * batches), issued at `now` and expiring `ttlMs` later. Throws `ProtocolError` with code `unknown_method` for a method outside
 * the list, or `invalid_request` naming the field for: a malformed requester, target or decision id;
 * target `"*"` with a method other than describe; a mutating method without a decision id; `now`
 * not a non-negative integer; `ttlMs` not an integer from 1 to 300,000 (300 s); a body that is not a
 * JSON object.
 */
export function createRequest(input: CreateRequestInput): CtlRequest {
  const { method, requester, target, decisionId, now } = input;
  const ttlMs = input.ttlMs ?? DEFAULT_REQUEST_TTL_MS;
  const body = input.body ?? {};
  if (!isCtlMethod(method)) {
    throw new ProtocolError('unknown_method', `method ${JSON.stringify(method)} is not a control method`, {
      field: 'method',
    });
  }
  if (!isNodeId(requester))
    invalid('requester', 'requester must be a node id (32 lower-case hex characters)');
  if (target === ANY_TARGET) {
    if (method !== DESCRIBE_METHOD) invalid('target', `target "*" is only allowed with ${DESCRIBE_METHOD}`);
  } else if (!isNodeId(target)) {
    invalid('target', 'target must be a node id (32 lower-case hex characters) or "*"');
  }
  if (decisionId !== undefined && (typeof decisionId !== 'string' || !HEX64_RE.test(decisionId))) {
    invalid('decision_id', 'decisionId must be 64 lower-case hex characters');
  }
  if (decisionId === undefined && mutates(method)) {
    invalid('decision_id', `${method} changes state and must carry a decisionId (the decision's chain hash)`);
  }
  if (!Number.isSafeInteger(now) || now < 0)
    invalid('issued_at_ms', 'now must be a non-negative integer (Unix ms)');
  if (!Number.isSafeInteger(ttlMs) || ttlMs < 1 || ttlMs > MAX_LIFETIME_MS) {
    invalid(
      'expires_at_ms',
      `ttlMs must be an integer from 1 to ${MAX_LIFETIME_MS} ms, got ${String(ttlMs)}`,
    );
  }
  if (!Number.isSafeInteger(now + ttlMs)) invalid('expires_at_ms', 'now + ttlMs is not a safe integer');
  if (!isJsonObject(body)) invalid('body', 'body must be a JSON object');
  return {
    version: 1,
    method,
    requester,
    target,
    nonce: freshNonce(),
    issued_at_ms: now,
    expires_at_ms: now + ttlMs,
    ...(decisionId === undefined ? {} : { decision_id: decisionId }),
    body,
  };
}

/**
 * Signs a request with the requester's key: the payload is the canonical JSON of the request, the
 * signature covers `DomainTag.ctlRequest || UTF-8(payload)`. Throws `ProtocolError` `invalid_request`
 * (naming the field) when the request does not match {@link CtlRequestSchema} or its requester is not
 * the node id of `keyPair`; `canonical_json` when the body cannot be canonicalised or the payload
 * exceeds 256 KiB.
 */
export function signRequest(request: CtlRequest, keyPair: KeyPair): SignedCtl {
  const parsed = parseFast(CtlRequestSchema, fastCtlRequest, request);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.join('.') || '$';
    invalid(field, `request field ${field}: ${issue?.message ?? 'invalid'}`);
  }
  if (parsed.data.requester !== nodeIdFromPublicKey(keyPair.publicKey)) {
    invalid('requester', 'requester is not the node id of the signing key');
  }
  return signCtlMessage(DomainTag.ctlRequest, parsed.data, keyPair);
}
