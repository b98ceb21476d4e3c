/**
 * A least-recently-used map with a fixed number of entries, for memoising pure functions of small
 * inputs (key objects, node ids) on hot paths. Reading an entry makes it the most recent; adding one
 * when full evicts the least recent. It never grows beyond `capacity`, whatever the input.
 */
export class BoundedCache<K, V> {
  #capacity: number;
  // A Map iterates in insertion order: re-inserting on every hit keeps the least recent first.
  readonly #entries = new Map<K, V>();

  constructor(capacity: number) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) {
      throw new RangeError('capacity must be a positive integer');
    }
    this.#capacity = capacity;
  }

  /** Most entries kept at once. */
  get capacity(): number {
    return this.#capacity;
  }

  /**
   * Sets the most entries kept at once (a positive integer); when it shrinks below the entries held,
   * the least recent ones are evicted.
   */
  resize(capacity: number): void {
    if (!Number.isSafeInteger(capacity) || capacity < 1) {
      throw new RangeError('capacity must be a positive integer');
    }
    this.#capacity = capacity;
    const entries = this.#entries;
    // cast: the map is not empty while it holds more than capacity, so its first key exists
    while (entries.size > capacity) entries.delete(entries.keys().next().value as K);
  }

  /** Number of entries held now. */
  get size(): number {
    return this.#entries.size;
  }

  /** The value for `key` (making it the most recent), or undefined when it is not held. */
  get(key: K): V | undefined {
    const entries = this.#entries;
    const value = entries.get(key);
    if (value === undefined) return undefined;
    entries.delete(key);
    entries.set(key, value);
    return value;
  }

  /** Stores `value` for `key` as the most recent entry, evicting the least recent one when full. */
  set(key: K, value: V): void {
    const entries = this.#entries;
    if (entries.has(key)) entries.delete(key);
    // cast: the map is not empty here, so its first key exists
    else if (entries.size >= this.#capacity) entries.delete(entries.keys().next().value as K);
    entries.set(key, value);
  }

  /** The value for `key`, computed by `make(key)` and stored when it is not held yet. */
  getOrSet(key: K, make: (key: K) => V): V {
    const hit = this.get(key);
    if (hit !== undefined) return hit;
    const value = make(key);
    this.set(key, value);
    return value;
  }
}

/**
 * The bytes of `bytes` as a string of one latin1 character per byte: a compact, exact Map key for a
 * short byte string (two different byte strings never give the same key).
 */
export function bytesKey(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
}
