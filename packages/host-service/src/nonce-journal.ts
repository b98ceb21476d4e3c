import { closeSync, fdatasyncSync, openSync, renameSync, writeSync } from 'node:fs';
import { HEX32_RE, readTextBounded, writeFileAtomic } from '@heddle/envelope';
import {
  MAX_CLOCK_SKEW_MS,
  NonceGuard,
  type NonceGuardOptions,
  type NonceJournalSink,
} from '@heddle/protocol';
import { errnoOf } from './errors.js';

/** Largest journal file read at start-up (about 8 times a full memory of 65,536 nonces). */
export const MAX_NONCE_JOURNAL_BYTES: number = 32 * 1024 * 1024;

/** Lines appended beyond twice the live nonces before the journal is rewritten with the live ones only. */
const COMPACT_SLACK = 4096;

const LINE_RE = /^([0-9a-f]{32}) (\d{1,16})$/;

/**
 * What opening the journal found: `ok` (read, or created on a first start), `missing` (no journal
 * where one was expected), or `corrupt` (set aside to `keptAs`; a line other than a torn last one did
 * not parse). In the last two cases the host cannot know which requests it accepted before.
 */
export interface NonceJournalReport {
  readonly state: 'ok' | 'missing' | 'corrupt';
  /** Nonces put back into the memory (still remembered at start-up). */
  readonly restored: number;
  /** A torn last line (a crash while appending) was ignored: its request was never acted on. */
  readonly tornLine: boolean;
  /** Where a corrupt journal was moved. */
  readonly keptAs?: string;
  /** What was wrong with a corrupt journal. */
  readonly reason?: string;
}

/** Options of {@link openNonceJournal}. */
export interface NonceJournalOptions extends Omit<NonceGuardOptions, 'journal'> {
  /** The journal file (`<data_dir>/nonces.journal`). */
  readonly path: string;
  /** The time now (Unix ms). */
  readonly nowMs: number;
}

/**
 * The host's nonce journal: every nonce of an accepted **mutating** request is appended as a line
 * `<nonce> <remember-until-ms>\n` and fdatasynced **before** the request is acted on, so that a host
 * restart cannot forget it (docs/protocol.md section 8). At start-up the nonces still remembered are
 * put back into the memory and the file is rewritten with them only; while running, it is rewritten
 * the same way whenever it holds more than twice the live nonces plus 4,096 lines. A torn last line is
 * ignored: a crash cut it before its fdatasync returned, so its request was never acted on.
 */
export class NonceJournal implements NonceJournalSink {
  readonly path: string;
  #fd: number;
  #lines: number;
  #guard: NonceGuard | undefined;

  private constructor(path: string, fd: number, lines: number) {
    this.path = path;
    this.#fd = fd;
    this.#lines = lines;
  }

  /** Writes and fdatasyncs one line; rewrites the file first when it has grown too long. */
  append(nonce: string, rememberUntilMs: number): void {
    if (!HEX32_RE.test(nonce) || !Number.isSafeInteger(rememberUntilMs) || rememberUntilMs < 0) {
      throw new TypeError('a nonce journal line needs a 32-hex nonce and a time');
    }
    const guard = this.#guard;
    if (guard !== undefined && this.#lines > 2 * guard.size + COMPACT_SLACK) this.#rewrite(guard.entries());
    const line = Buffer.from(`${nonce} ${rememberUntilMs}\n`, 'latin1');
    let off = 0;
    while (off < line.length) off += writeSync(this.#fd, line, off, line.length - off);
    fdatasyncSync(this.#fd);
    this.#lines++;
  }

  /** Lines in the file now. */
  get lines(): number {
    return this.#lines;
  }

  /** Closes the file. */
  close(): void {
    closeSync(this.#fd);
  }

  #rewrite(live: Iterable<[string, number]>): void {
    let text = '';
    let n = 0;
    for (const [nonce, until] of live) {
      text += `${nonce} ${until}\n`;
      n++;
    }
    writeFileAtomic(this.path, text, { mode: 0o600 });
    if (this.#fd >= 0) closeSync(this.#fd);
    this.#fd = openSync(this.path, 'a', 0o600);
    this.#lines = n;
  }

  /**
   * Opens (or creates) the journal at `options.path`, and builds the nonce memory that writes to it,
   * with the nonces it still remembers put back. A corrupt journal is moved aside
   * (`<path>.corrupt-<ms>`) and reported. Throws only when the file cannot be read or written
   * (permissions, a read-only or full disk): the host cannot promise replay protection then.
   */
  static open(options: NonceJournalOptions): {
    guard: NonceGuard;
    journal: NonceJournal;
    report: NonceJournalReport;
  } {
    const { path, nowMs } = options;
    let text: string | undefined;
    try {
      text = readTextBounded(path, MAX_NONCE_JOURNAL_BYTES);
    } catch (err) {
      const code = errnoOf(err);
      if (code === 'file_too_large')
        text = '\u0000'; // unusable: set aside below
      else if (code !== 'ENOENT') throw err;
    }
    const live: [string, number][] = [];
    let state: NonceJournalReport['state'] = text === undefined ? 'missing' : 'ok';
    let tornLine = false;
    let reason: string | undefined;
    let keptAs: string | undefined;
    if (text !== undefined) {
      const lines = text.split('\n');
      // cast: split() always returns at least one element, so pop() has one.
      const last = lines.pop() as string; // '' when the file ends with a newline
      if (last !== '') tornLine = true;
      for (let i = 0; i < lines.length; i++) {
        // cast: i is within the array's bounds.
        const m = LINE_RE.exec(lines[i] as string);
        if (m === null) {
          reason = `line ${i + 1} is not "<32 hex> <ms>"`;
          break;
        }
        const until = Number(m[2]);
        // cast: LINE_RE has one capture group, set whenever it matches.
        if (until > nowMs) live.push([m[1] as string, until]);
      }
      if (reason !== undefined) {
        state = 'corrupt';
        tornLine = false;
        live.length = 0;
        keptAs = `${path}.corrupt-${nowMs}`;
        renameSync(path, keptAs);
      }
    }
    const base: NonceGuardOptions = {
      ...(options.capacity === undefined ? {} : { capacity: options.capacity }),
      skewMs: options.skewMs ?? MAX_CLOCK_SKEW_MS,
    };
    let restored = 0;
    const scratch = new NonceGuard(base);
    for (const [nonce, until] of live) if (scratch.restore(nonce, until, nowMs)) restored++;
    // Start from the live nonces only (atomically), then append.
    const journal = new NonceJournal(path, -1, 0);
    journal.#rewrite(scratch.entries());
    const guard = new NonceGuard({ ...base, journal });
    for (const [nonce, until] of scratch.entries()) guard.restore(nonce, until, nowMs);
    journal.#guard = guard;
    const report: NonceJournalReport = {
      state,
      restored,
      tornLine,
      ...(keptAs === undefined ? {} : { keptAs }),
      ...(reason === undefined ? {} : { reason }),
    };
    return { guard, journal, report };
  }
}
