/**
 * A binary min-heap of numbers, used by the nonce guard to find its oldest expiry bucket. Push and pop
 * are O(log n); peek is O(1).
 */
export class MinHeap {
  readonly #items: number[] = [];

  /** Number of values held. */
  get size(): number {
    return this.#items.length;
  }

  /** The smallest value, or undefined when empty. */
  peek(): number | undefined {
    return this.#items[0];
  }

  /** Adds a value. */
  push(value: number): void {
    const a = this.#items;
    a.push(value);
    let i = a.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (a[parent]! <= value) break;
      a[i] = a[parent]!;
      i = parent;
    }
    a[i] = value;
  }

  /** Removes and returns the smallest value, or undefined when empty. */
  pop(): number | undefined {
    const a = this.#items;
    const top = a[0];
    const last = a.pop();
    if (a.length === 0 || last === undefined) return top;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= a.length) break;
      const r = l + 1;
      const c = r < a.length && a[r]! < a[l]! ? r : l;
      if (a[c]! >= last) break;
      a[i] = a[c]!;
      i = c;
    }
    a[i] = last;
    return top;
  }
}
