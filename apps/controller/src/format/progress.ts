import type { CliIo } from '../io.js';
import { bytes, shortId } from './duration.js';

/** One progress report of a package transfer to a node (the place stream's `progress` event). */
export interface TransferUpdate {
  readonly node_id: string;
  readonly bytes: number;
  readonly total: number;
}

/** Where a progress bar draws: whole lines, and (on a terminal) raw text for `\r` redraws. */
export interface ProgressSink {
  line(text: string): void;
  raw?(text: string): void;
}

/** Options of a {@link TransferProgressBar}. */
export interface ProgressOptions {
  /** Redraw one line in place with `\r` (a terminal); otherwise print a line at each 25% step. */
  readonly tty: boolean;
  /** The width of the bar itself, in characters (default 24). */
  readonly barWidth?: number;
}

/** The percentage of `bytes` of `total`, 0..100, whole; a zero total is complete. */
export function percent(done: number, total: number): number {
  if (total <= 0) return 100;
  return Math.max(0, Math.min(100, Math.floor((done * 100) / total)));
}

/** The bar text: `[#########...........]`. */
export function bar(done: number, total: number, width = 24): string {
  const fill = Math.round((percent(done, total) / 100) * width);
  return `[${'#'.repeat(fill)}${'.'.repeat(width - fill)}]`;
}

/** One progress line: `sending to 1a2b3c4d [####....]  50%  1.0 KiB / 2.0 KiB`. */
export function progressLine(u: TransferUpdate, width = 24): string {
  const pct = `${percent(u.bytes, u.total)}%`.padStart(4);
  return `sending to ${shortId(u.node_id)} ${bar(u.bytes, u.total, width)} ${pct}  ${bytes(u.bytes)} / ${bytes(u.total)}`;
}

/**
 * A progress bar for the package transfer of a place, per node. On a terminal it redraws one line
 * with `\r` and moves to a new line when another node starts; elsewhere (a pipe, a log file) it prints
 * one line each time a node's transfer crosses 25%, 50%, 75% and 100%. Give it nothing with `--json`.
 */
export class TransferProgressBar {
  readonly #sink: ProgressSink;
  readonly #tty: boolean;
  readonly #width: number;
  #current: string | undefined;
  #drawn = 0;
  readonly #steps = new Map<string, number>();

  constructor(sink: ProgressSink, options: ProgressOptions) {
    this.#sink = sink;
    this.#tty = options.tty && sink.raw !== undefined;
    this.#width = options.barWidth ?? 24;
  }

  /** Shows one update. */
  update(u: TransferUpdate): void {
    if (this.#tty) {
      if (this.#current !== undefined && this.#current !== u.node_id) this.#newline();
      this.#current = u.node_id;
      const text = progressLine(u, this.#width);
      const pad = ' '.repeat(Math.max(0, this.#drawn - text.length));
      this.#sink.raw?.(`\r${text}${pad}`);
      this.#drawn = text.length;
      return;
    }
    const step = Math.floor(percent(u.bytes, u.total) / 25);
    const last = this.#steps.get(u.node_id) ?? 0;
    if (step > last) {
      this.#steps.set(u.node_id, step);
      this.#sink.line(progressLine(u, this.#width));
    }
  }

  /** Ends the bar (a terminal gets its final newline); call it before printing anything else. */
  done(): void {
    if (this.#tty && this.#current !== undefined) this.#newline();
    this.#current = undefined;
  }

  #newline(): void {
    this.#sink.raw?.('\n');
    this.#drawn = 0;
  }
}

/** The progress bar of a command: on standard error, nothing with `--json`. */
export function progressFor(io: CliIo, json: boolean): TransferProgressBar | undefined {
  if (json) return undefined;
  const raw = io.errRaw;
  return new TransferProgressBar(
    { line: (t) => io.err(t), ...(raw === undefined ? {} : { raw: (t: string) => raw(t) }) },
    { tty: io.errIsTty === true },
  );
}
