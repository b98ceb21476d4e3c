import type { ChainEvent } from './event.js';
import type { TornTail } from './file-format.js';

/** What a store hands the chain when it is opened. */
export interface StoreContents {
  /** The stored events, in seq order. */
  readonly events: readonly ChainEvent[];
  /**
   * True when the store has already verified the events (every hash recomputed, every link
   * checked). Otherwise the chain verifies them itself.
   */
  readonly verified?: boolean;
  /** A torn tail the store found (and, unless read-only, repaired). */
  readonly tornTail?: TornTail | null;
  /** True when the store was created by this open (it did not exist before). */
  readonly created?: boolean;
}

/**
 * Where a chain keeps its events. The chain computes everything (seq, hashes, the record text); a
 * store only persists and reloads. Stores are used by one chain at a time.
 */
export interface ChainStore {
  /** True when the store refuses appends. */
  readonly readOnly: boolean;
  /** Loads the stored events. Called once, before any append. */
  load(): Promise<StoreContents>;
  /**
   * Persists one event after all earlier ones. `record` is the event's canonical JSON (no newline).
   * Called synchronously in seq order, possibly many times before earlier calls resolve; resolves
   * only once this event (and every earlier one) is durable. A rejection means the store's state is
   * unknown: the chain then refuses further appends.
   */
  append(event: ChainEvent, record: string): Promise<void>;
  /** Waits for pending appends, then releases resources. */
  close(): Promise<void>;
  /**
   * Reads durable event `seq` back (optional): a chain opened with `retainEvents` keeps only its
   * newest events in memory and reads older ones with this.
   */
  readEvent?(seq: number): ChainEvent;
}

/**
 * A store in memory: nothing survives the process, but a store object may be reopened by another
 * chain (in the same process) and keeps its events.
 */
export class MemoryChainStore implements ChainStore {
  /** Always false. */
  readonly readOnly: boolean = false;
  private readonly events: ChainEvent[] = [];

  /** Starts empty, or with `events` (which the chain verifies when it opens the store). */
  constructor(events: readonly ChainEvent[] = []) {
    this.events.push(...events);
  }

  /** Returns a copy of the events; the chain verifies them. */
  async load(): Promise<StoreContents> {
    return { events: this.events.slice() };
  }

  /** Keeps the event; resolves at once. */
  async append(event: ChainEvent, _record?: string): Promise<void> {
    this.events.push(event);
  }

  /** Nothing to release. */
  async close(): Promise<void> {}
}
