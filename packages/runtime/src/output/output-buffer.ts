/** Default capacity of an {@link OutputBuffer}: 64 KiB. */
export const DEFAULT_OUTPUT_BUFFER_BYTES: number = 64 * 1024;

/**
 * A bounded ring buffer of bytes that keeps the tail of a stream (a process's stdout or stderr).
 * Memory is fixed at `capacity` bytes however much is pushed; {@link truncatedBytes} counts what was
 * dropped from the front. Shared by the native and WASI adapters.
 */
export class OutputBuffer {
  /** Most bytes kept. */
  readonly capacity: number;
  readonly #buf: Buffer;
  /** Index of the next write. */
  #end = 0;
  /** Bytes held (at most capacity). */
  #size = 0;
  #total = 0;

  /** A buffer keeping at most `capacity` bytes (at least 1). */
  constructor(capacity: number = DEFAULT_OUTPUT_BUFFER_BYTES) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) {
      throw new RangeError(`capacity: expected a positive integer, got ${capacity}`);
    }
    this.capacity = capacity;
    this.#buf = Buffer.alloc(capacity);
  }

  /** Appends a chunk; only its last `capacity` bytes can survive. */
  push(chunk: Uint8Array): void {
    this.#total += chunk.length;
    let data = chunk;
    if (data.length >= this.capacity) {
      data = data.subarray(data.length - this.capacity);
      this.#buf.set(data, 0);
      this.#end = 0;
      this.#size = this.capacity;
      return;
    }
    const first = Math.min(data.length, this.capacity - this.#end);
    this.#buf.set(data.subarray(0, first), this.#end);
    if (first < data.length) this.#buf.set(data.subarray(first), 0);
    this.#end = (this.#end + data.length) % this.capacity;
    this.#size = Math.min(this.capacity, this.#size + data.length);
  }

  /** Total bytes ever pushed. */
  get totalBytes(): number {
    return this.#total;
  }

  /** Bytes dropped from the front (pushed but no longer held). */
  get truncatedBytes(): number {
    return this.#total - this.#size;
  }

  /** The bytes held, oldest first (a copy). */
  bytes(): Buffer {
    if (this.#size < this.capacity) return Buffer.from(this.#buf.subarray(this.#end - this.#size, this.#end));
    return Buffer.concat([this.#buf.subarray(this.#end), this.#buf.subarray(0, this.#end)]);
  }

  /**
   * The bytes held as UTF-8 text. A multi-byte character cut by truncation at the front becomes a
   * replacement character; invalid bytes never throw.
   */
  text(): string {
    return this.bytes().toString('utf8');
  }

  /** Empties the buffer (the totals restart at zero). */
  clear(): void {
    this.#end = 0;
    this.#size = 0;
    this.#total = 0;
  }
}
