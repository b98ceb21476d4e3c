/** Default number of lines a {@link LineTail} keeps. */
export const DEFAULT_LINE_TAIL_LINES = 1000;

/** Default longest line a {@link LineTail} keeps (longer lines are cut and marked). */
export const DEFAULT_LINE_TAIL_LINE_CHARS = 4096;

/** What a {@link LineTail} appends to a line it cut at `maxLineChars`. */
export const LINE_CUT_MARKER = '... [line cut]';

/**
 * A string with no reference to the (possibly huge) string it was sliced from: V8 keeps the parent of
 * a slice alive, so a stored slice of a 64 KiB chunk would hold all of it.
 */
function detached(s: string): string {
  return Buffer.from(s, 'utf8').toString('utf8');
}

interface StreamState {
  /** The line so far (at most `maxLineChars`, detached). */
  partial: string;
  /** The current line was already emitted cut: drop the rest of it until its newline. */
  cutting: boolean;
}

/**
 * The last lines of several streams interleaved as they arrived (for `logs(handle, lines)`). Partial
 * lines are held per stream until their newline (or {@link flush}). A line longer than `maxLineChars`
 * is kept cut, with {@link LINE_CUT_MARKER}, and the rest of it is dropped up to its newline, so a
 * program printing 100 MB without a newline leaves one cut line. At most `maxLines` lines are kept, each
 * a string of its own (never a slice of the chunk it came in), so memory stays bounded by
 * `maxLines x maxLineChars` whatever is pushed.
 */
export class LineTail {
  readonly maxLines: number;
  readonly maxLineChars: number;
  readonly #lines: string[] = [];
  readonly #state = new Map<string, StreamState>();

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
    let st = this.#state.get(stream);
    if (st === undefined) {
      st = { partial: '', cutting: false };
      this.#state.set(stream, st);
    }
    const firstNl = text.indexOf('\n');
    if (firstNl < 0) {
      this.#extend(st, text, prefix);
      return;
    }
    // The end of the pending line.
    this.#extend(st, text.slice(0, firstNl), prefix);
    if (!st.cutting) this.#add([prefix + st.partial]);
    st.partial = '';
    st.cutting = false;
    // The complete lines after it (only the last maxLines can survive).
    const lastNl = text.lastIndexOf('\n');
    const lines: string[] = [];
    let end = lastNl;
    while (end > firstNl && lines.length < this.maxLines) {
      const nl = text.lastIndexOf('\n', end - 1);
      lines.push(prefix + this.#cut(text.slice(nl + 1, end)));
      end = nl;
    }
    lines.reverse();
    this.#add(lines);
    // The start of the next line.
    this.#extend(st, text.slice(lastNl + 1), prefix);
  }

  /** Emits every stream's pending partial line. */
  flush(prefixes: Readonly<Record<string, string>> = {}): void {
    for (const [stream, st] of this.#state) {
      if (st.partial.length > 0 && !st.cutting) this.#add([(prefixes[stream] ?? '') + st.partial]);
    }
    this.#state.clear();
  }

  /** The last `n` complete lines, oldest first. */
  last(n: number): string[] {
    if (n <= 0) return [];
    return this.#lines.slice(-Math.floor(n));
  }

  /** Appends `text` to the stream's pending line; a line that grows too long is emitted cut at once. */
  #extend(st: StreamState, text: string, prefix: string): void {
    if (st.cutting || text.length === 0) return;
    if (st.partial.length + text.length > this.maxLineChars) {
      this.#add([prefix + this.#cut(st.partial + text)]);
      st.partial = '';
      st.cutting = true;
      return;
    }
    st.partial = detached(st.partial + text);
  }

  #cut(line: string): string {
    return line.length > this.maxLineChars ? `${line.slice(0, this.maxLineChars)}${LINE_CUT_MARKER}` : line;
  }

  #add(lines: readonly string[]): void {
    for (const line of lines) this.#lines.push(detached(line));
    if (this.#lines.length > this.maxLines) this.#lines.splice(0, this.#lines.length - this.maxLines);
  }
}
