import { type KeyPair, nodeIdFromPublicKey } from '@heddle/envelope';
import { type Capability, type SignedNodeFacts, signNodeFacts } from '@heddle/placement';

/** Default lifetime of the facts a host signs: 5 minutes. */
export const DEFAULT_FACTS_TTL_MS: number = 5 * 60 * 1000;

/** Options of a {@link NodeFactsSource}. */
export interface NodeFactsSourceOptions {
  /** The node's key: the facts are signed with it and name its node id. */
  readonly keys: KeyPair;
  /** Probes the node's capabilities (the system probe and every route adapter's `provides()`). */
  readonly probe: () => Promise<readonly Capability[]>;
  /** Lifetime of each statement (default 5 min); a fresh one is signed after half of it. */
  readonly ttlMs?: number;
  /** The clock (Unix ms; default `Date.now`). */
  readonly now?: () => number;
}

/**
 * Fresh signed node facts on demand, for `describe`. The capabilities are probed again and a new
 * statement signed once half the previous one's lifetime has passed, so a controller never caches
 * facts that are about to expire. The sequence number is the larger of the previous one plus one and
 * the issue time, so it keeps growing across restarts of the host (as long as its clock does).
 * Concurrent callers share one probe.
 */
export class NodeFactsSource {
  readonly #keys: KeyPair;
  readonly #probe: () => Promise<readonly Capability[]>;
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #nodeId: string;
  #seq = 0;
  #current: { readonly signed: SignedNodeFacts; readonly issuedAt: number } | undefined;
  #pending: { readonly promise: Promise<SignedNodeFacts>; readonly epoch: number } | undefined;
  #epoch = 0;

  constructor(options: NodeFactsSourceOptions) {
    this.#keys = options.keys;
    this.#probe = options.probe;
    this.#ttlMs = options.ttlMs ?? DEFAULT_FACTS_TTL_MS;
    this.#now = options.now ?? Date.now;
    this.#nodeId = nodeIdFromPublicKey(options.keys.publicKey);
  }

  /** Signed facts that hold for at least half their lifetime from now. */
  current(): Promise<SignedNodeFacts> {
    const now = this.#now();
    const c = this.#current;
    if (c !== undefined && now >= c.issuedAt && now - c.issuedAt < this.#ttlMs / 2) {
      return Promise.resolve(c.signed);
    }
    if (this.#pending === undefined || this.#pending.epoch !== this.#epoch) {
      const epoch = this.#epoch;
      const promise = this.#refresh(epoch).finally(() => {
        if (this.#pending?.promise === promise) this.#pending = undefined;
      });
      this.#pending = { promise, epoch };
    }
    return this.#pending.promise;
  }

  /** Forgets the current statement, so the next {@link current} probes again (a route changed). */
  invalidate(): void {
    this.#current = undefined;
    this.#epoch++;
  }

  async #refresh(epoch: number): Promise<SignedNodeFacts> {
    const capabilities = dedupe(await this.#probe());
    const issuedAt = this.#now();
    this.#seq = Math.max(this.#seq + 1, issuedAt);
    const signed = signNodeFacts(
      { node_id: this.#nodeId, issued_at_ms: issuedAt, ttl_ms: this.#ttlMs, seq: this.#seq, capabilities },
      this.#keys.secretKey,
    );
    if (epoch === this.#epoch) this.#current = { signed, issuedAt };
    return signed;
  }
}

/** Capabilities with duplicate ids removed (the first one wins), in order. */
function dedupe(capabilities: readonly Capability[]): Capability[] {
  const seen = new Set<string>();
  const out: Capability[] = [];
  for (const c of capabilities) {
    if (seen.has(c.id)) continue;
    seen.add(c.id);
    out.push(c);
  }
  return out;
}
