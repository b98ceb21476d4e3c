/** One server-sent event as the parser dispatches it (the HTML standard's event stream rules). */
export interface SseMessage {
  /** The `event` field (`message` when the event had none). */
  readonly type: string;
  /** The `data` lines, joined with `\n`. */
  readonly data: string;
  /** The last event id in force when it was dispatched (`''` before any). */
  readonly lastEventId: string;
}

/**
 * An incremental parser of `text/event-stream` (the HTML standard, "Parsing an event stream"): fed
 * text in chunks of any size (a line may be split anywhere, `\r\n` included), it returns the events
 * completed so far. Comments (`:`) are skipped, unknown fields ignored, an `id` containing NUL
 * ignored, `retry` kept when it is all digits. A line longer than `maxLineChars` is refused (the
 * stream is then broken: the caller drops the connection).
 */
export class SseParser {
  #buf = '';
  #lastCr = false;
  #type = '';
  #data: string[] = [];
  #lastId = '';
  #retry: number | undefined;
  readonly #maxLineChars: number;

  constructor(options: { readonly maxLineChars?: number } = {}) {
    this.#maxLineChars = options.maxLineChars ?? 1024 * 1024;
  }

  /** The last event id seen (`Last-Event-ID` of a reconnection). */
  get lastEventId(): string {
    return this.#lastId;
  }

  /** The last valid `retry` field, in ms, or undefined. */
  get retryMs(): number | undefined {
    return this.#retry;
  }

  /** Feeds a chunk; returns the events it completed. Throws `RangeError` for a line over the limit. */
  feed(chunk: string): SseMessage[] {
    const out: SseMessage[] = [];
    let text = chunk;
    // A `\r\n` split between two chunks: the `\n` ends nothing new.
    if (this.#lastCr && text.startsWith('\n')) text = text.slice(1);
    this.#lastCr = false;
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      this.#line(this.#buf + text.slice(start, i), out);
      this.#buf = '';
      if (c === 13) {
        if (i + 1 < text.length) {
          if (text.charCodeAt(i + 1) === 10) i++;
        } else this.#lastCr = true;
      }
      start = i + 1;
    }
    this.#buf += text.slice(start);
    if (this.#buf.length > this.#maxLineChars) throw new RangeError('event stream line too long');
    return out;
  }

  #line(line: string, out: SseMessage[]): void {
    if (line === '') {
      if (this.#data.length > 0) {
        out.push({
          type: this.#type === '' ? 'message' : this.#type,
          data: this.#data.join('\n'),
          lastEventId: this.#lastId,
        });
      }
      this.#type = '';
      this.#data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.#type = value;
    else if (field === 'data') this.#data.push(value);
    else if (field === 'id') {
      if (!value.includes('\u0000')) this.#lastId = value;
    } else if (field === 'retry' && /^[0-9]+$/.test(value)) this.#retry = Number(value);
  }
}
