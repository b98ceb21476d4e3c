/**
 * Serialises work per key: `run(key, fn)` waits for the previous `fn` under the same key to settle
 * before running. Used so that two calls on one instance id (a re-sent place, a stop racing a start)
 * never interleave inside the adapter.
 */
export class KeyedLock {
  readonly #tails = new Map<string, Promise<unknown>>();

  /** Runs `fn` after every earlier call with `key` has settled; resolves or rejects as `fn` does. */
  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const current = previous.then(
      () => fn(),
      () => fn(),
    );
    const tail = current.then(
      () => undefined,
      () => undefined,
    );
    this.#tails.set(key, tail);
    try {
      return await current;
    } finally {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    }
  }

  /** Keys with work queued or running. */
  get size(): number {
    return this.#tails.size;
  }
}
