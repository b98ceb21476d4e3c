import { fromHex, type KeyPair, toHex } from '@heddle/envelope';
import type {
  AppendObservation,
  ChainOptions,
  ConsistencyProof,
  EventQuery,
  InclusionProof,
  OpenReport,
} from './chain-types.js';
import { type SignedCheckpoint, signCheckpoint } from './checkpoint.js';
import { ChainCorruptError, ChainError } from './errors.js';
import { buildEvent, type ChainEvent } from './event.js';
import { GENESIS_PREV_HASH } from './hashing.js';
import { MerkleTree } from './merkle.js';
import type { ChainStore } from './store.js';
import { anchorFailure, verifyEvents } from './verify.js';
import type { CheckpointAnchor, VerifyOptions, VerifyResult } from './verify-types.js';

/**
 * The audit chain: hash-linked events over a {@link ChainStore}, with lookups, verification and a
 * Merkle tree for proofs. Open one with `openChain`, `openMemoryChain` or `openChainFile`.
 *
 * Appends take their seq synchronously, in call order; the returned promise resolves once the event
 * is durable in the store. Lookups, `size`, `head` and the Merkle root see only durable events.
 */
export class Chain {
  /** What opening the chain found. */
  readonly openReport: OpenReport;
  private readonly store: ChainStore;
  private readonly clock: () => number;
  /** The events kept in memory: seq `windowStart` onwards (all of them unless `retainEvents` is set). */
  private window: ChainEvent[] = [];
  private windowStart = 0;
  /** Total events appended or loaded (durable or not). */
  private count = 0;
  /** With `retainEvents`: the most durable events kept in memory. */
  private readonly retain: number;
  /** With `retainEvents`: every event's hash (32 bytes each), for the Merkle tree and proofs. */
  private hashes: Uint8Array | undefined;
  private readonly byHash = new Map<string, number>();
  private readonly bySource = new Map<string, number[]>();
  private readonly byKind = new Map<string, number[]>();
  private readonly tree = new MerkleTree();
  private durable: number;
  private failed: unknown;
  private closed = false;
  private readonly observers = new Set<(o: AppendObservation) => void>();

  private constructor(
    store: ChainStore,
    events: readonly ChainEvent[],
    report: OpenReport,
    options: ChainOptions,
  ) {
    this.store = store;
    this.clock = options.clock ?? Date.now;
    this.openReport = report;
    const retain = options.retainEvents;
    this.retain = retain ?? Number.POSITIVE_INFINITY;
    if (retain !== undefined) this.hashes = new Uint8Array(32 * Math.max(1024, events.length * 2));
    for (const e of events) this.index(e);
    this.durable = events.length;
    this.trim();
  }

  /**
   * Opens a chain over `store`: loads the events and verifies them (unless the store already did).
   * Throws `ChainCorruptError` when they do not verify.
   */
  static async open(store: ChainStore, options: ChainOptions = {}): Promise<Chain> {
    const retain = options.retainEvents;
    if (retain !== undefined && (!Number.isSafeInteger(retain) || retain < 1)) {
      throw new ChainError('invalid_argument', 'retainEvents must be a positive integer', {
        field: 'retainEvents',
      });
    }
    if (retain !== undefined && store.readEvent === undefined) {
      throw new ChainError('invalid_argument', 'retainEvents needs a store that reads events back', {
        field: 'retainEvents',
      });
    }
    const contents = await store.load();
    const events = contents.events;
    if (contents.verified !== true) {
      const result = verifyEvents(events);
      if (result.failure !== null) throw new ChainCorruptError(result.failure);
    }
    const report = { tornTail: contents.tornTail ?? null, created: contents.created ?? false };
    return new Chain(store, events, report, options);
  }

  /** Number of durable events (the next durable event gets seq = size, once earlier appends land). */
  get size(): number {
    return this.durable;
  }

  /** Hash of the last durable event, or 64 zeros for an empty chain. */
  get head(): string {
    return this.durable === 0 ? GENESIS_PREV_HASH : this.eventAt(this.durable - 1).hash;
  }

  /** True when the store refuses appends. */
  get readOnly(): boolean {
    return this.store.readOnly;
  }

  /**
   * Appends an event and resolves with it once it is durable. Never throws; rejects with a
   * `ChainError`: `invalid_source`, `invalid_kind`, `invalid_payload`, `invalid_timestamp`,
   * `chain_read_only`, `chain_closed`, `chain_store_failed` (after a failed write: reopen the chain).
   */
  append(source: string, kind: string, payload: unknown): Promise<ChainEvent> {
    if (this.observers.size === 0) return this.appendNow(source, kind, payload);
    const t0 = performance.now();
    const tell = (ok: boolean): void => {
      const o: AppendObservation = { source, kind, payload, ms: performance.now() - t0, ok };
      for (const f of this.observers) {
        try {
          f(o);
        } catch {
          // An observer's failure is its own: the append's outcome does not change.
        }
      }
    };
    return this.appendNow(source, kind, payload).then(
      (e) => {
        tell(true);
        return e;
      },
      (err: unknown) => {
        tell(false);
        throw err;
      },
    );
  }

  /**
   * Calls `listener` after every append settles (for metrics: its kind, payload and latency). A
   * listener that throws is ignored. Returns the function that removes it.
   */
  observe(listener: (o: AppendObservation) => void): () => void {
    this.observers.add(listener);
    return () => {
      this.observers.delete(listener);
    };
  }

  private appendNow(source: string, kind: string, payload: unknown): Promise<ChainEvent> {
    try {
      if (this.closed) throw new ChainError('chain_closed', 'the chain is closed');
      if (this.store.readOnly) throw new ChainError('chain_read_only', 'the chain is open read-only');
      if (this.failed !== undefined) {
        throw new ChainError('chain_store_failed', 'an earlier write failed; reopen the chain', {
          cause: this.failed,
        });
      }
      const seq = this.count;
      const prev = seq === 0 ? GENESIS_PREV_HASH : this.eventAt(seq - 1).hash;
      const built = buildEvent(seq, this.clock(), source, kind, payload, prev);
      this.index(built.event);
      let stored: Promise<void>;
      try {
        stored = this.store.append(built.event, built.record);
      } catch (err) {
        stored = Promise.reject(err); // a store that throws instead of rejecting
      }
      return stored.then(
        () => {
          if (this.durable < seq + 1) this.durable = seq + 1;
          this.trim();
          return built.event;
        },
        (err: unknown) => {
          this.failed ??= err;
          throw err instanceof ChainError
            ? err
            : new ChainError('chain_store_failed', `storing event ${seq} failed: ${String(err)}`, {
                cause: err,
              });
        },
      );
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** The event at `seq`, if durable. */
  get(seq: number): ChainEvent | undefined {
    return Number.isSafeInteger(seq) && seq >= 0 && seq < this.durable ? this.eventAt(seq) : undefined;
  }

  /** The event whose hash is `hash` (64 hex, e.g. a decision id), if durable. */
  getByHash(hash: string): ChainEvent | undefined {
    const seq = this.byHash.get(hash);
    return seq === undefined ? undefined : this.get(seq);
  }

  /** Events with seq in [from, to) (to defaults to the size; both clamped to the chain). */
  range(from: number, to: number = this.durable): ChainEvent[] {
    const a = Math.max(0, Math.min(Math.trunc(from), this.durable));
    const b = Math.max(a, Math.min(Math.trunc(to), this.durable));
    if (a >= this.windowStart) return this.window.slice(a - this.windowStart, b - this.windowStart);
    const out: ChainEvent[] = [];
    for (let i = a; i < b; i++) out.push(this.eventAt(i));
    return out;
  }

  /** The last `n` durable events, oldest first. */
  tail(n: number): ChainEvent[] {
    return this.range(this.durable - Math.max(0, Math.trunc(n)));
  }

  /** Events matching `query`, in seq order. */
  find(query: EventQuery = {}): ChainEvent[] {
    const from = Math.max(0, query.from ?? 0);
    const to = Math.min(this.durable, query.to ?? this.durable);
    const limit = query.limit ?? Number.POSITIVE_INFINITY;
    const out: ChainEvent[] = [];
    let candidates: readonly number[] | undefined;
    if (query.kind !== undefined) candidates = this.byKind.get(query.kind) ?? [];
    if (query.source !== undefined) {
      const s = this.bySource.get(query.source) ?? [];
      if (candidates === undefined || s.length < candidates.length) candidates = s;
    }
    if (candidates === undefined) return this.range(from, to).slice(0, limit);
    for (const seq of candidates) {
      if (out.length >= limit || seq >= to) break;
      if (seq < from) continue;
      const e = this.eventAt(seq);
      if (
        (query.kind === undefined || e.kind === query.kind) &&
        (query.source === undefined || e.source === query.source)
      ) {
        out.push(e);
      }
    }
    return out;
  }

  /** Events of one kind, in seq order. */
  byKindOf(kind: string): ChainEvent[] {
    return this.find({ kind });
  }

  /** Events of one source, in seq order. */
  bySourceOf(source: string): ChainEvent[] {
    return this.find({ source });
  }

  /** Iterates over the durable events in seq order. */
  *[Symbol.iterator](): IterableIterator<ChainEvent> {
    for (let i = 0; i < this.durable; i++) yield this.eventAt(i);
  }

  /**
   * Re-verifies the durable events (every hash recomputed, every link checked) and, optionally, a
   * checkpoint. Detects events mutated in memory; a file is re-read by `verifyChainFile`.
   */
  verify(options: VerifyOptions = {}): VerifyResult {
    return verifyEvents(this.range(0, this.durable), options);
  }

  /**
   * Checks a checkpoint (or any size/head/root anchor) against this chain without re-hashing events:
   * `truncated` when the chain is shorter, `checkpoint_mismatch` when the head or root differs.
   */
  checkCheckpoint(checkpoint: CheckpointAnchor): VerifyResult {
    const bad = anchorFailure(
      checkpoint,
      this.durable,
      null,
      (i) => this.hashAt(i),
      (n) => this.root(n),
    );
    return { ok: bad === null, size: this.durable, head: this.head, failure: bad };
  }

  /** The Merkle root (64 hex) over the first `size` event hashes (default: all durable events). */
  root(size: number = this.durable): string {
    this.checkSize(size, 'size');
    return toHex(this.treeAt(size).root(size));
  }

  /** The inclusion proof of event `seq` in the tree of the first `size` events (default: all). */
  inclusionProof(seq: number, size: number = this.durable): InclusionProof {
    this.checkSize(size, 'size');
    if (!Number.isSafeInteger(seq) || seq < 0 || seq >= size) {
      throw new ChainError('invalid_argument', `seq ${seq} is not in a tree of size ${size}`, {
        field: 'seq',
      });
    }
    return {
      seq,
      size,
      leaf: this.hashAt(seq),
      path: this.treeAt(size).inclusionProof(seq, size).map(toHex),
      root: this.root(size),
    };
  }

  /** The consistency proof between sizes `size1` and `size2` (default: all), 0 <= size1 <= size2. */
  consistencyProof(size1: number, size2: number = this.durable): ConsistencyProof {
    this.checkSize(size2, 'size2');
    if (!Number.isSafeInteger(size1) || size1 < 0 || size1 > size2) {
      throw new ChainError('invalid_argument', `size1 ${size1} must be between 0 and ${size2}`, {
        field: 'size1',
      });
    }
    return {
      size1,
      size2,
      root1: this.root(size1),
      root2: this.root(size2),
      path: this.treeAt(size2).consistencyProof(size1, size2).map(toHex),
    };
  }

  /**
   * Signs a checkpoint of the first `size` events (default: all durable ones) with the node's key
   * pair, stamped with the chain's clock.
   */
  checkpoint(keys: KeyPair, size: number = this.durable): SignedCheckpoint {
    this.checkSize(size, 'size');
    const head = size === 0 ? GENESIS_PREV_HASH : this.hashAt(size - 1);
    return signCheckpoint({ size, root: this.root(size), head, ts: this.clock() }, keys);
  }

  /** The current time from the chain's clock (what `ts` of the next event would be). */
  now(): number {
    return this.clock();
  }

  /** Waits for pending appends, then closes the store. Appends are refused afterwards. */
  async close(): Promise<void> {
    this.closed = true;
    await this.store.close();
  }

  private index(event: ChainEvent): void {
    this.window.push(event);
    this.count++;
    if (this.hashes !== undefined) {
      const at = event.seq * 32;
      if (at + 32 > this.hashes.length) {
        const grown = new Uint8Array(this.hashes.length * 2);
        grown.set(this.hashes);
        this.hashes = grown;
      }
      this.hashes.set(fromHex(event.hash, 32), at);
    }
    this.byHash.set(event.hash, event.seq);
    push(this.bySource, event.source, event.seq);
    push(this.byKind, event.kind, event.seq);
  }

  /** The Merkle tree, brought up to the durable size (it is extended lazily, off the append path). */
  private treeAt(size: number): MerkleTree {
    for (let i = this.tree.size; i < size; i++) this.tree.append(this.hashBytes(i));
    return this.tree;
  }

  /** The event at `seq` (< count): from memory, or read back from the store when it left the window. */
  private eventAt(seq: number): ChainEvent {
    if (seq >= this.windowStart) {
      // cast: windowStart <= seq < count: the window holds it (noUncheckedIndexedAccess cannot see it)
      return this.window[seq - this.windowStart] as ChainEvent;
    }
    // cast: a window start above 0 is set only when the store reads events back (checked when opened)
    return (this.store.readEvent as (seq: number) => ChainEvent).call(this.store, seq);
  }

  /** The hash (64 hex) of event `seq` (< count), without reading the event back. */
  private hashAt(seq: number): string {
    if (seq >= this.windowStart || this.hashes === undefined) return this.eventAt(seq).hash;
    return toHex(this.hashBytes(seq));
  }

  private hashBytes(seq: number): Uint8Array {
    if (this.hashes === undefined || seq >= this.windowStart) return fromHex(this.eventAt(seq).hash, 32);
    return this.hashes.subarray(seq * 32, seq * 32 + 32);
  }

  /**
   * With `retainEvents`: once the window holds twice the retained durable events, the oldest durable
   * ones leave memory (read back from the store when asked for); events not yet durable always stay.
   */
  private trim(): void {
    const keepFrom = this.durable - this.retain;
    if (keepFrom - this.windowStart < this.retain) return;
    this.window = this.window.slice(keepFrom - this.windowStart);
    this.windowStart = keepFrom;
  }

  private checkSize(size: number, field: string): void {
    if (!Number.isSafeInteger(size) || size < 0 || size > this.durable) {
      throw new ChainError(
        'invalid_argument',
        `${field} ${size} is outside a chain of ${this.durable} events`,
        { field },
      );
    }
  }
}

function push(map: Map<string, number[]>, key: string, seq: number): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [seq]);
  else list.push(seq);
}
