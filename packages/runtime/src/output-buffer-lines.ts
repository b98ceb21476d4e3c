/** Default number of lines a {@link LineTail} keeps. */
export const DEFAULT_LINE_TAIL_LINES = 1000;

/** Default longest line a {@link LineTail} keeps (longer lines are cut and marked). */
export const DEFAULT_LINE_TAIL_LINE_CHARS = 4096;

/**
 * The last lines of several streams interleaved as they arrived (for `logs(handle, lines)`). Partial
 * lines are held per stream until their newline (or {@link flush}); each line is capped at
 * `maxLineChars` and at most `maxLines` lines are kept, so memory stays bounded.
 */
export class LineTail {
  readonly maxLines: number;
  readonly maxLineChars: number;
  readonly #lines: string[] = [];
  readonly #partial = new Map<string, string>();

  /** A tail of at most `maxLines` lines of at most `maxLineChars` characters each. */
  constructor(
    maxLines: number = DEFAULT_LINE_TAIL_LINES,
    maxLineChars: number = DEFAULT_LINE_TAIL_LINE_CHARS,
  ) {
    this.maxLines = Math.max(1, Math.floor(maxLines));
    this.maxLineChars = Math.max(16, Math.floor(maxLineChars));
  }

  /**
   * Adds text of one stream; `prefix` (such as `stderr: `) is put before each of its lines. Only the
   * last `maxLines` lines of a chunk are looked at, so a flood of short lines costs linear time.
   */
  push(stream: string, text: string, prefix = ''): void {
    const all = (this.#partial.get(stream) ?? '') + text;
    const lastNl = all.lastIndexOf('\n');
    if (lastNl < 0) {
      // A line without a newline that is already too long is emitted cut, keeping memory bounded.
      if (all.length > this.maxLineChars) {
        this.#add([prefix + all]);
        this.#partial.set(stream, '');
      } else {
        this.#partial.set(stream, all);
      }
      return;
    }
    const complete = all.slice(0, lastNl);
    this.#partial.set(stream, all.slice(lastNl + 1));
    const lines: string[] = [];
    let end = complete.length;
    while (lines.length < this.maxLines) {
      const nl = end === 0 ? -1 : complete.lastIndexOf('\n', end - 1);
      lines.push(prefix + complete.slice(nl + 1, end));
      if (nl < 0) break;
      end = nl;
    }
    lines.reverse();
    this.#add(lines);
  }

  /** Emits every stream's pending partial line. */
  flush(prefixes: Readonly<Record<string, string>> = {}): void {
    for (const [stream, pending] of this.#partial) {
      if (pending.length > 0) this.#add([(prefixes[stream] ?? '') + pending]);
    }
    this.#partial.clear();
  }

  /** The last `n` complete lines, oldest first. */
  last(n: number): string[] {
    if (n <= 0) return [];
    return this.#lines.slice(-Math.floor(n));
  }

  #add(lines: readonly string[]): void {
    for (const line of lines) {
      this.#lines.push(
        line.length > this.maxLineChars ? `${line.slice(0, this.maxLineChars)}... [line cut]` : line,
      );
    }
    if (this.#lines.length > this.maxLines) this.#lines.splice(0, this.#lines.length - this.maxLines);
  }
}
