import { HeddleError } from '@heddle/envelope';

const REFUSAL_CODES_VALUE = [
  'signature',
  'expired',
  'replay',
  'not_for_me',
  'unauthorized',
  'unknown_method',
  'invalid_request',
  'governance',
  'admission',
  'fetch',
  'verify',
  'runtime',
  'unknown_instance',
  'no_space',
] as const;
/**
 * The refusal codes a host sends back (stable strings, part of the protocol). Meanings:
 * - `signature`: the signature, key or signature encoding is invalid, or the requester is not the
 *   node id of the signing key;
 * - `expired`: outside its validity window (expired, or issued more than the clock skew ahead);
 * - `replay`: the nonce was already used (or the nonce memory is full and cannot rule a replay out);
 * - `not_for_me`: addressed to another node, or to `"*"` with a method other than describe;
 * - `unauthorized`: the requester is not an authorised controller for this method;
 * - `unknown_method`: the method is not one of the control methods;
 * - `invalid_request`: malformed envelope, payload, schema, version, lifetime, nonce, missing
 *   decision id on a mutating method, or a transport method that differs from the signed one;
 * - `governance`, `admission`, `fetch`, `verify`, `runtime`, `unknown_instance`: refusals of a
 *   verified request by the host's governance gate, admission check, package fetch, package
 *   verification, runtime adapter, or instance lookup;
 * - `no_space`: the host's package store ran out of disk space while it fetched or stored the package
 *   (nothing of it was kept; the host acted on nothing and accepts a place again once space is freed).
 */
export const REFUSAL_CODES: typeof REFUSAL_CODES_VALUE = Object.freeze(REFUSAL_CODES_VALUE);

/** One of {@link REFUSAL_CODES}. */
export type RefusalCode = (typeof REFUSAL_CODES)[number];

const CODES: ReadonlySet<string> = new Set<string>(REFUSAL_CODES);

/** True when `value` is one of {@link REFUSAL_CODES}. */
export function isRefusalCode(value: unknown): value is RefusalCode {
  return typeof value === 'string' && CODES.has(value);
}

/** Options of a {@link Refusal}. */
export interface RefusalOptions {
  /**
   * The request passed verification: valid signature, requester the id of the signing key and an
   * authorised controller, fresh, unreplayed. Default false. Every refusal thrown by `verifyRequest`
   * is unauthenticated; a host's later refusals of a verified request (governance, admission, ...)
   * are authenticated.
   */
  readonly authenticated?: boolean;
  /** The request field the refusal is about (a dotted path), when there is one. */
  readonly field?: string;
  /** The underlying error, if any. */
  readonly cause?: unknown;
}

/**
 * A host's refusal of a control request: a stable `code` from {@link REFUSAL_CODES} and a `reason`
 * for people that names the offending field. `authenticated` tells a host whether the request came
 * provably from an authorised controller: an unauthenticated one gets one signed refusal, its
 * connection is closed, and its chained refusals are budgeted.
 */
export class Refusal extends HeddleError {
  /** The refusal code, one of {@link REFUSAL_CODES}. */
  declare readonly code: RefusalCode;
  /** What was wrong, for people; names the field when there is one. */
  readonly reason: string;
  /** Whether the refused request was authenticated (see {@link RefusalOptions.authenticated}). */
  readonly authenticated: boolean;

  constructor(code: RefusalCode, reason: string, options: RefusalOptions = {}) {
    if (!isRefusalCode(code)) throw new TypeError(`unknown refusal code ${JSON.stringify(code)}`);
    super(code, `${code}: ${reason}`, {
      ...(options.field === undefined ? {} : { field: options.field }),
      ...(options.cause === undefined ? {} : { cause: options.cause }),
    });
    this.reason = reason;
    this.authenticated = options.authenticated ?? false;
  }
}
