/** Shared fixtures of the `ctl/` tests (not exported by the package). */
import {
  DomainTag,
  type DomainTagValue,
  type KeyPair,
  keyPairFromSecret,
  nodeIdFromPublicKey,
  signWithDomain,
  utf8,
} from '@heddle/envelope';
import { AllowListPolicy } from './controller-policy.js';
import { createRequest, signRequest } from './create-request.js';
import type { CtlMethod } from './methods.js';
import { NonceGuard } from './nonce-guard.js';
import { Refusal, type RefusalCode } from './refusal.js';
import type { CtlBody, CtlRequest } from './request.js';
import type { SignedCtl } from './signed-ctl.js';
import type { VerifyRequestOptions } from './verify-request.js';

/** A key pair from a 32-byte secret filled with `byte`. */
export function fixedKeys(byte: number): KeyPair {
  return keyPairFromSecret(new Uint8Array(32).fill(byte));
}

/** The controller's keys. */
export const controller: KeyPair = fixedKeys(0x11);
/** The host's keys. */
export const host: KeyPair = fixedKeys(0x22);
/** A third party's keys. */
export const stranger: KeyPair = fixedKeys(0x33);
/** The controller's node id. */
export const CONTROLLER_ID: string = nodeIdFromPublicKey(controller.publicKey);
/** The host's node id. */
export const HOST_ID: string = nodeIdFromPublicKey(host.publicKey);
/** The stranger's node id. */
export const STRANGER_ID: string = nodeIdFromPublicKey(stranger.publicKey);
/** A fixed "now" (Unix ms). */
export const T0 = 1_700_000_000_000;
/** A decision id. */
export const DECISION: string = 'd1'.repeat(32);

/** Verify options of the host, authorising the controller, with a fresh nonce guard. */
export function hostOptions(overrides: Partial<VerifyRequestOptions> = {}): VerifyRequestOptions {
  return {
    nodeId: HOST_ID,
    now: T0,
    policy: new AllowListPolicy({ nodeIds: [CONTROLLER_ID] }),
    nonces: new NonceGuard(),
    ...overrides,
  };
}

/** Arguments of {@link makeSigned}. */
export interface MakeSignedInput {
  readonly method?: CtlMethod;
  readonly target?: string;
  readonly body?: CtlBody;
  readonly decisionId?: string;
  readonly now?: number;
  readonly ttlMs?: number;
  readonly keys?: KeyPair;
}

/** A request from the controller to the host (a status call by default), and its signed form. */
export function makeSigned(input: MakeSignedInput = {}): { request: CtlRequest; signed: SignedCtl } {
  const keys = input.keys ?? controller;
  const request = createRequest({
    method: input.method ?? 'workload.status',
    requester: nodeIdFromPublicKey(keys.publicKey),
    target: input.target ?? HOST_ID,
    body: input.body ?? {},
    now: input.now ?? T0,
    ...(input.ttlMs === undefined ? {} : { ttlMs: input.ttlMs }),
    ...(input.decisionId === undefined ? {} : { decisionId: input.decisionId }),
  });
  return { request, signed: signRequest(request, keys) };
}

/** Signs arbitrary payload text as a request (to reach the checks after the signature). */
export function signRaw(
  payload: string,
  keys: KeyPair = controller,
  tag: DomainTagValue = DomainTag.ctlRequest,
): SignedCtl {
  const sig = signWithDomain(tag, keys.secretKey, utf8(payload));
  return {
    payload,
    public_key: Buffer.from(keys.publicKey).toString('hex'),
    signature: Buffer.from(sig).toString('hex'),
  };
}

/** Signs a request object as given (no schema check), to build requests `createRequest` refuses. */
export function signObject(request: Record<string, unknown>, keys: KeyPair = controller): SignedCtl {
  const keys2 = Object.keys(request).sort();
  const sorted: Record<string, unknown> = {};
  for (const k of keys2) sorted[k] = request[k];
  return signRaw(JSON.stringify(sorted), keys);
}

/** A valid request object for the host, as a plain record, to edit before {@link signObject}. */
export function requestRecord(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    version: 1,
    method: 'workload.status',
    requester: CONTROLLER_ID,
    target: HOST_ID,
    nonce: 'a0'.repeat(16),
    issued_at_ms: T0,
    expires_at_ms: T0 + 60_000,
    body: {},
    ...overrides,
  };
}

/** Runs `fn` and returns the Refusal it throws; fails when it throws anything else or nothing. */
export function refusalOf(fn: () => unknown): Refusal {
  try {
    fn();
  } catch (err) {
    if (err instanceof Refusal) return err;
    throw new Error(`expected a Refusal, got ${String(err)}`);
  }
  throw new Error('expected a Refusal, got success');
}

/** The code of the Refusal `fn` throws. */
export function codeOf(fn: () => unknown): RefusalCode {
  return refusalOf(fn).code;
}
