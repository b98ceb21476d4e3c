/**
 * Hand-written recognisers of the well-formed control messages, tried before the zod schemas on the
 * call path. Each one accepts a subset of what its schema accepts and returns the same output (a fresh
 * object with the schema's fields); for anything else it returns undefined and the caller runs the
 * schema, which stays the authority and produces the error. So they change the cost of a valid
 * message, never which messages are accepted or how a refusal reads.
 */

import type { JsonValue } from '@heddle/envelope';
import { HEX32_RE, HEX64_RE, isJsonObject, type JsonObject, utf8Length } from '@heddle/envelope';
import { z } from 'zod';
import { MAX_LIFETIME_MS, MAX_REASON_LENGTH, MAX_TOKEN_LENGTH } from './limits.js';
import { ANY_TARGET, DESCRIBE_METHOD, isCtlMethod, mutates } from './methods.js';
import { isRefusalCode } from './refusal.js';
import type { CtlRequest } from './request.js';
import { type CtlOutcome, type CtlResponse, RESPONSE_METHOD_RE } from './response.js';

/** Protocol string limits count UTF-8 bytes (docs/protocol.md section 7). */
const tokenFits = (s: string): boolean => s.length <= MAX_TOKEN_LENGTH && utf8Length(s) <= MAX_TOKEN_LENGTH;
const TOKEN_MESSAGE = `at most ${MAX_TOKEN_LENGTH} bytes of UTF-8`;

/** A request as `verifyRequest` first reads it: the form of each field, before any protocol rule. */
export interface RequestForm {
  /** Any integer; the version rule is checked later. */
  readonly version: number;
  /** 1 to 128 bytes of UTF-8; the method list is checked later. */
  readonly method: string;
  /** At most 128 bytes of UTF-8. */
  readonly requester: string;
  /** At most 128 bytes of UTF-8. */
  readonly target: string;
  /** At most 128 bytes of UTF-8. */
  readonly nonce: string;
  /** A non-negative integer. */
  readonly issued_at_ms: number;
  /** A non-negative integer. */
  readonly expires_at_ms: number;
  /** 64 lower-case hex characters, when present. */
  readonly decision_id?: string;
  /** A JSON object. */
  readonly body: JsonObject;
}

/**
 * The request's form as `verifyRequest` first checks it (after the signature): each field's format is
 * checked later, at its place in the protocol's order.
 */
export const RequestFormSchema: z.ZodType<RequestForm> = z.strictObject({
  version: z.int(),
  method: z.string().min(1).refine(tokenFits, TOKEN_MESSAGE),
  requester: z.string().refine(tokenFits, TOKEN_MESSAGE),
  target: z.string().refine(tokenFits, TOKEN_MESSAGE),
  nonce: z.string().refine(tokenFits, TOKEN_MESSAGE),
  issued_at_ms: z.int().nonnegative(),
  expires_at_ms: z.int().nonnegative(),
  decision_id: z.string().regex(HEX64_RE, 'expected 64 lower-case hex characters').exactOptional(),
  body: z.custom<JsonObject>(isJsonObject, { message: 'expected a JSON object' }),
});

const REQUEST_KEYS: ReadonlySet<string> = new Set([
  'version',
  'method',
  'requester',
  'target',
  'nonce',
  'issued_at_ms',
  'expires_at_ms',
  'decision_id',
  'body',
]);
const RESPONSE_KEYS: ReadonlySet<string> = new Set([
  'version',
  'method',
  'responder',
  'request_nonce',
  'outcome',
]);
const RESPONSE_NONCE_RE = /^(?:[0-9a-f]{32})?$/;

/** A plain object whose enumerable keys (inherited ones too, as zod sees them) are all in `allowed`. */
function onlyKeys(v: unknown, allowed: ReadonlySet<string>): v is Record<string, unknown> {
  if (!isJsonObject(v)) return false;
  for (const key in v) if (!allowed.has(key)) return false;
  return true;
}

// cast: Number.isSafeInteger(n) has just proven n a number (it is no type guard).
const isTimestamp = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 0;
const isToken = (s: unknown): s is string => typeof s === 'string' && tokenFits(s);

/** The request form of `v` (what verifyRequest's form schema outputs), or undefined to ask the schema. */
export function fastRequestForm(v: unknown): RequestForm | undefined {
  if (!onlyKeys(v, REQUEST_KEYS)) return undefined;
  const { version, method, requester, target, nonce, issued_at_ms, expires_at_ms, body } = v;
  const hasDecision = 'decision_id' in v;
  const decision_id = v.decision_id;
  if (!Number.isSafeInteger(version)) return undefined;
  if (!isToken(method) || method.length < 1) return undefined;
  if (!isToken(requester) || !isToken(target) || !isToken(nonce)) return undefined;
  if (!isTimestamp(issued_at_ms) || !isTimestamp(expires_at_ms)) return undefined;
  if (hasDecision && (typeof decision_id !== 'string' || !HEX64_RE.test(decision_id))) return undefined;
  if (!isJsonObject(body)) return undefined;
  return {
    // cast: Number.isSafeInteger(version) was checked above (it is no type guard).
    version: version as number,
    method,
    requester,
    target,
    nonce,
    issued_at_ms,
    expires_at_ms,
    // cast: a present decision_id was checked to be a string above.
    ...(hasDecision ? { decision_id: decision_id as string } : {}),
    body,
  };
}

/** `v` as a complete {@link CtlRequest} (what `CtlRequestSchema` outputs), or undefined to ask the schema. */
export function fastCtlRequest(v: unknown): CtlRequest | undefined {
  const r = fastRequestForm(v);
  if (r === undefined || r.version !== 1 || !isCtlMethod(r.method)) return undefined;
  if (!HEX32_RE.test(r.requester) || !HEX32_RE.test(r.nonce)) return undefined;
  if (r.target === ANY_TARGET ? r.method !== DESCRIBE_METHOD : !HEX32_RE.test(r.target)) return undefined;
  if (mutates(r.method) && r.decision_id === undefined) return undefined;
  const lifetime = r.expires_at_ms - r.issued_at_ms;
  if (lifetime <= 0 || lifetime > MAX_LIFETIME_MS) return undefined;
  return { ...r, version: 1, method: r.method };
}

function fastOutcome(v: unknown): CtlOutcome | undefined {
  if (!isJsonObject(v)) return undefined;
  if (v.status === 'ok') {
    for (const key in v) if (key !== 'status' && key !== 'result') return undefined;
    const result = v.result;
    // cast: the result comes from a strict JSON parse of the signed payload, so it is a JsonValue.
    return result === undefined ? undefined : { status: 'ok', result: result as JsonValue };
  }
  if (v.status !== 'refused') return undefined;
  for (const key in v) {
    if (key !== 'status' && key !== 'code' && key !== 'reason' && key !== 'authenticated') return undefined;
  }
  const { code, reason, authenticated } = v;
  if (!isRefusalCode(code) || typeof authenticated !== 'boolean') return undefined;
  if (typeof reason !== 'string' || utf8Length(reason) > MAX_REASON_LENGTH) return undefined;
  return { status: 'refused', code, reason, authenticated };
}

/** `v` as a {@link CtlResponse} (what `CtlResponseSchema` outputs), or undefined to ask the schema. */
export function fastCtlResponse(v: unknown): CtlResponse | undefined {
  if (!onlyKeys(v, RESPONSE_KEYS)) return undefined;
  const { version, method, responder, request_nonce } = v;
  if (version !== 1) return undefined;
  if (typeof method !== 'string' || !RESPONSE_METHOD_RE.test(method)) return undefined;
  if (typeof responder !== 'string' || !HEX32_RE.test(responder)) return undefined;
  if (typeof request_nonce !== 'string' || !RESPONSE_NONCE_RE.test(request_nonce)) return undefined;
  const outcome = fastOutcome(v.outcome);
  if (outcome === undefined) return undefined;
  return { version: 1, method, responder, request_nonce, outcome };
}

/**
 * `schema.safeParse(value)`, except that a value `fast` recognises is returned as `fast` built it
 * without running the schema.
 */
export function parseFast<T>(
  schema: z.ZodType<T>,
  fast: (value: unknown) => T | undefined,
  value: unknown,
): z.ZodSafeParseResult<T> {
  const data = fast(value);
  return data === undefined ? schema.safeParse(value) : { success: true, data };
}
