import { isBytes, isHex, isNodeId, toHex } from '@heddle/envelope';
import { type CtlMethod, isCtlMethod } from './methods.js';

/** Who is asking, as a {@link ControllerPolicy} sees it: the requester is already proven to own the key. */
export interface ControllerIdentity {
  /** The requester's node id (equal to the node id of `publicKey`). */
  readonly requester: string;
  /** The signing public key (32 bytes). */
  readonly publicKey: Uint8Array;
  /** The method requested. */
  readonly method: CtlMethod;
}

/**
 * Decides whether a requester may call a method on this host. Consulted by `verifyRequest` after the
 * signature, the identity, the target, the time window and the nonce format have been checked, and
 * before the nonce is recorded. Must be synchronous and must not throw (a throw counts as a refusal).
 */
export interface ControllerPolicy {
  /** True when `identity` may send `identity.method` to this host. */
  isAuthorized(identity: ControllerIdentity): boolean;
}

/** The controllers an {@link AllowListPolicy} admits. */
export interface AllowListOptions {
  /** Node ids (32 lower-case hex) of authorised controllers. */
  readonly nodeIds?: Iterable<string>;
  /** Public keys (32 bytes, or 64 lower-case hex) of authorised controllers. */
  readonly publicKeys?: Iterable<Uint8Array | string>;
  /** Methods they may call (default: every method). */
  readonly methods?: Iterable<CtlMethod>;
}

/**
 * A {@link ControllerPolicy} that admits the listed node ids and public keys, for the listed methods.
 * Listing a node id is as strong as listing its key: the node id is 128 bits of SHA-256 of the key and
 * `verifyRequest` has proven the requester owns the key. An empty list admits nobody. Throws a
 * TypeError at construction for a malformed node id, key or method.
 */
export class AllowListPolicy implements ControllerPolicy {
  readonly #nodeIds = new Set<string>();
  readonly #keys = new Set<string>();
  readonly #methods: ReadonlySet<string> | undefined;

  constructor(options: AllowListOptions = {}) {
    for (const id of options.nodeIds ?? []) {
      if (!isNodeId(id)) throw new TypeError(`not a node id (32 lower-case hex): ${JSON.stringify(id)}`);
      this.#nodeIds.add(id);
    }
    for (const key of options.publicKeys ?? []) {
      if (isBytes(key, 32)) this.#keys.add(toHex(key));
      else if (isHex(key, 32)) this.#keys.add(key);
      else throw new TypeError('a public key must be 32 bytes or 64 lower-case hex characters');
    }
    if (options.methods !== undefined) {
      const methods = new Set<string>();
      for (const m of options.methods) {
        if (!isCtlMethod(m)) throw new TypeError(`not a control method: ${JSON.stringify(m)}`);
        methods.add(m);
      }
      this.#methods = methods;
    }
  }

  /** True when the requester's node id or key is listed and the method is allowed. */
  isAuthorized(identity: ControllerIdentity): boolean {
    if (this.#methods !== undefined && !this.#methods.has(identity.method)) return false;
    if (this.#nodeIds.has(identity.requester)) return true;
    return isBytes(identity.publicKey, 32) && this.#keys.has(toHex(identity.publicKey));
  }
}
