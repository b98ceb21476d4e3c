import type { NodeTier } from '@heddle/model';
import type { Capability } from './capability.js';
import { PlacementError } from './errors.js';
import { type SignedNodeFacts, verifyNodeFacts } from './facts.js';
import { minProvenance, type Provenance } from './vocabulary.js';

/** One node's facts as the cache holds them: verified, provenance capped, with the operator's tier. */
export interface CachedFacts {
  /** Node id (the id of `public_key`). */
  readonly node_id: string;
  /** The node's key (hex); later facts must be signed by the same key. */
  readonly public_key: string;
  /** Trust tier the operator assigned (never one the node claimed). */
  readonly tier: NodeTier;
  /** Sequence number of the held facts. */
  readonly seq: number;
  /** When they were issued (node clock, Unix ms). */
  readonly issued_at_ms: number;
  /** When they expire (`issued_at_ms + ttl_ms`). */
  readonly expires_at_ms: number;
  /** Capabilities, each provenance capped to what the cache believes. */
  readonly capabilities: readonly Capability[];
  /** The signed facts exactly as received (to forward or re-verify). */
  readonly signed: SignedNodeFacts;
}

/** Options of {@link NodeFactsCache}. */
export interface FactsCacheOptions {
  /** Most nodes held (default 100,000). Expired entries are evicted first; then inserts fail closed. */
  readonly maxNodes?: number;
  /**
   * Strongest provenance believed from remote facts, per operator tier (default: discovered
   * `claimed`, paired `probed`, pinned `measured`). Local facts (`local: true`) are not capped.
   */
  readonly provenanceCap?: Partial<Readonly<Record<NodeTier, Provenance>>>;
  /** How far ahead of the local clock facts may be issued (default 30 s). */
  readonly maxClockSkewMs?: number;
}

/** Options of {@link NodeFactsCache.insert}. */
export interface InsertFactsOptions {
  /** The local clock (Unix ms). */
  readonly now_ms: number;
  /**
   * Trust tier the operator assigns to this node. When absent, a known node keeps its tier and a new
   * one is `discovered`.
   */
  readonly tier?: NodeTier;
  /** The key the operator pinned for this node (hex): facts signed by any other key are refused. */
  readonly expectedKey?: string;
  /** These are this process's own facts (not capped). */
  readonly local?: boolean;
}

const DEFAULT_CAP: Readonly<Record<NodeTier, Provenance>> = {
  discovered: 'claimed',
  paired: 'probed',
  pinned: 'measured',
};

/**
 * Verified node facts by node id. It accepts only a higher sequence number than it holds, refuses
 * facts that are expired or from the future, binds each node id to the first key seen for it (or the
 * key the operator expects), caps the provenance it believes for remote facts by operator tier, and
 * holds the tier the operator assigned. Bounded: when full it evicts an expired entry, or refuses.
 * The highest sequence number accepted per node outlives its entry (remove, prune, eviction), in a
 * separate map bounded by `maxNodes` ids (least recently updated dropped first), so an older facts
 * message that is still unexpired is refused as stale even after its node's entry is gone.
 */
export class NodeFactsCache {
  readonly #entries = new Map<string, CachedFacts>();
  /**
   * Highest sequence number accepted per node id, kept apart from the entries so that removing,
   * pruning or evicting an entry does not let an older, still unexpired facts message in again.
   * Bounded: least recently updated ids are dropped beyond `maxNodes`.
   */
  readonly #highWater = new Map<string, number>();
  readonly #maxNodes: number;
  readonly #cap: Readonly<Record<NodeTier, Provenance>>;
  readonly #skew: number;

  constructor(options: FactsCacheOptions = {}) {
    this.#maxNodes = options.maxNodes ?? 100_000;
    this.#cap = { ...DEFAULT_CAP, ...options.provenanceCap };
    this.#skew = options.maxClockSkewMs ?? 30_000;
    if (!Number.isSafeInteger(this.#maxNodes) || this.#maxNodes < 1)
      throw new RangeError('maxNodes must be >= 1');
  }

  /** Number of nodes held. */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * Verifies and stores signed facts (an untrusted value). Throws {@link PlacementError}:
   * `invalid_facts` / `self_asserted_tier` (malformed), `facts_signature`, `facts_wrong_key` (another
   * key than the node's, or than `expectedKey`), `facts_stale` (sequence not higher), `facts_expired`,
   * `facts_from_future`, `facts_cache_full`.
   */
  insert(signed: unknown, options: InsertFactsOptions): CachedFacts {
    const { facts, public_key } = verifyNodeFacts(signed, options.expectedKey);
    const now = options.now_ms;
    const held = this.#entries.get(facts.node_id);
    if (held !== undefined && held.public_key !== public_key) {
      throw new PlacementError(
        'facts_wrong_key',
        `facts for ${facts.node_id} signed by another key than the one held`,
        {
          field: 'public_key',
        },
      );
    }
    const high = Math.max(held?.seq ?? -1, this.#highWater.get(facts.node_id) ?? -1);
    if (high >= 0 && facts.seq <= high) {
      const what = held !== undefined && held.seq === high ? 'held' : 'highest accepted';
      throw new PlacementError(
        'facts_stale',
        `facts seq ${facts.seq} is not higher than the ${what} ${high}`,
        {
          field: 'seq',
        },
      );
    }
    if (facts.issued_at_ms > now + this.#skew) {
      throw new PlacementError(
        'facts_from_future',
        `facts issued ${facts.issued_at_ms - now} ms in the future`,
        {
          field: 'issued_at_ms',
        },
      );
    }
    const expires = facts.issued_at_ms + facts.ttl_ms;
    if (expires <= now) {
      throw new PlacementError('facts_expired', `facts expired at ${expires} (now ${now})`, {
        field: 'ttl_ms',
      });
    }
    const tier = options.tier ?? held?.tier ?? 'discovered';
    if (held === undefined && this.#entries.size >= this.#maxNodes && !this.#evictOne(now)) {
      throw new PlacementError('facts_cache_full', `facts cache holds ${this.#maxNodes} nodes, none expired`);
    }
    const cap = options.local === true ? 'measured' : this.#cap[tier];
    const entry: CachedFacts = {
      node_id: facts.node_id,
      public_key,
      tier,
      seq: facts.seq,
      issued_at_ms: facts.issued_at_ms,
      expires_at_ms: expires,
      capabilities: capProvenance(facts.capabilities, cap),
      // cast: verifyNodeFacts(signed) succeeded above, so signed is well-formed signed facts
      signed: copySigned(signed as SignedNodeFacts),
    };
    this.#entries.set(facts.node_id, entry);
    this.#remember(facts.node_id, facts.seq);
    return entry;
  }

  /**
   * Sets the operator-assigned tier of a held node (and re-applies the provenance cap of that tier).
   * Throws `unknown_node` when the node is not held.
   */
  setTier(nodeId: string, tier: NodeTier): void {
    const held = this.#entries.get(nodeId);
    if (held === undefined)
      throw new PlacementError('unknown_node', `no facts held for ${nodeId}`, { field: 'node_id' });
    const { facts } = verifyNodeFacts(held.signed);
    this.#entries.set(nodeId, {
      ...held,
      tier,
      capabilities: capProvenance(facts.capabilities, this.#cap[tier]),
    });
  }

  /** The facts held for `nodeId` (expired ones included: the engine records them as expired). */
  get(nodeId: string): CachedFacts | undefined {
    return this.#entries.get(nodeId);
  }

  /** Every held entry, in insertion order. */
  entries(): IterableIterator<CachedFacts> {
    return this.#entries.values();
  }

  /**
   * Forgets a node's facts; true when they were held. Its highest accepted sequence number is kept
   * (older facts stay refused as `facts_stale`) unless `forgetSeq` (for a node the operator re-installed,
   * whose counter restarted).
   */
  remove(nodeId: string, options: { readonly forgetSeq?: boolean } = {}): boolean {
    const held = this.#entries.get(nodeId);
    if (options.forgetSeq === true) this.#highWater.delete(nodeId);
    else if (held !== undefined) this.#remember(nodeId, held.seq);
    return this.#entries.delete(nodeId);
  }

  /** The highest sequence number accepted for `nodeId` (held or not), if remembered. */
  highestSeq(nodeId: string): number | undefined {
    return this.#highWater.get(nodeId) ?? this.#entries.get(nodeId)?.seq;
  }

  /** Remembers `seq` as the highest accepted for `nodeId` (most recently used), within the bound. */
  #remember(nodeId: string, seq: number): void {
    const prev = this.#highWater.get(nodeId) ?? -1;
    this.#highWater.delete(nodeId);
    this.#highWater.set(nodeId, Math.max(prev, seq));
    if (this.#highWater.size > this.#maxNodes)
      // cast: the map is not empty here, so its first key exists
      this.#highWater.delete(this.#highWater.keys().next().value as string);
  }

  /** Removes every entry expired at `now_ms`; returns how many. */
  prune(now_ms: number): number {
    let n = 0;
    for (const [id, e] of this.#entries) {
      if (e.expires_at_ms <= now_ms) {
        this.#remember(id, e.seq);
        this.#entries.delete(id);
        n++;
      }
    }
    return n;
  }

  #evictOne(now: number): boolean {
    let victim: CachedFacts | undefined;
    for (const e of this.#entries.values()) {
      if (e.expires_at_ms <= now && (victim === undefined || e.expires_at_ms < victim.expires_at_ms))
        victim = e;
    }
    if (victim === undefined) return false;
    this.#remember(victim.node_id, victim.seq);
    this.#entries.delete(victim.node_id);
    return true;
  }
}

function capProvenance(caps: readonly Capability[], cap: Provenance): readonly Capability[] {
  return caps.map((c) => (minProvenance(c.provenance, cap) === c.provenance ? c : { ...c, provenance: cap }));
}

function copySigned(s: SignedNodeFacts): SignedNodeFacts {
  return { payload: s.payload, public_key: s.public_key, signature: s.signature };
}
