import { closeSync, openSync, readSync } from 'node:fs';
import { type FileHandle, open, readFile } from 'node:fs/promises';
import { errnoCode, writeFileAtomic } from '@heddle/envelope';
import { ChainCorruptError, ChainError } from './errors.js';
import type { ChainEvent } from './event.js';
import { headerBytes, isForeignFile, scanChainBytes, type TornTail } from './file-format.js';
import { acquireChainLock, releaseChainLock, saveTornBytes } from './file-lock.js';
import { isRecordProblem, parseRecord } from './record.js';
import type { ChainStore, StoreContents } from './store.js';

/** Options of {@link FileChainStore}. */
export interface FileChainStoreOptions {
  /** Open without writing anything: a torn tail is reported, not repaired; appends are refused. */
  readonly readOnly?: boolean;
  /** Create the file when it does not exist (default true unless read-only). */
  readonly create?: boolean;
}

/** Counters of a file store's writes, to observe group commit. */
export interface FileStoreStats {
  /** Batches written (each one write of all its records, then one fsync). */
  readonly batches: number;
  /** `write` system calls (more than batches only after short writes). */
  readonly writes: number;
  /** fdatasync calls made for appended records. */
  readonly syncs: number;
  /** Records appended. */
  readonly records: number;
  /** Bytes appended. */
  readonly bytes: number;
  /** Most records in one batch. */
  readonly maxBatch: number;
}

interface Pending {
  readonly text: string;
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
}

/**
 * The crash-safe append-only file store: a header line, then one canonical event record per line
 * (docs/chain.md). Appends are group-committed: all appends made while a batch is being written are
 * written next as one `write` and made durable by one `fdatasync`; each append resolves only after its
 * batch's fdatasync returned. On open, a torn tail is saved to `<file>.torn-<offset>` and truncated
 * (both reported in `tornTail`) unless read-only; any other bad record throws
 * {@link ChainCorruptError} naming the seq, line and byte offset, and nothing is truncated. One
 * writer per file, enforced: opening for writing takes `<file>.lock` (O_EXCL, holding the pid) and
 * refuses with `chain_locked` while a live process holds it; a lock whose process is dead is taken
 * over. Read-only opens take no lock.
 */
export class FileChainStore implements ChainStore {
  /** The file's path. */
  readonly path: string;
  /** True when opened read-only. */
  readonly readOnly: boolean;
  private readonly create: boolean;
  private handle: FileHandle | undefined;
  private lockPath: string | undefined;
  private position = 0;
  private loaded = false;
  private closed = false;
  private failed: unknown;
  private queue: Pending[] = [];
  private flushing: Promise<void> | undefined;
  private counters = { batches: 0, writes: 0, syncs: 0, records: 0, bytes: 0, maxBatch: 0 };
  /** The byte offset of each record's line, appended ones included (the index `readEvent` uses). */
  private starts: number[] = [];
  /** The byte offset after the last record, queued ones included. */
  private end = 0;
  /** A descriptor for reading records back on a read-only store (opened on first use). */
  private readFd: number | undefined;

  /** Prepares a store for `path`; nothing is read or written until `load()`. */
  constructor(path: string, options: FileChainStoreOptions = {}) {
    this.path = path;
    this.readOnly = options.readOnly ?? false;
    this.create = options.create ?? !this.readOnly;
  }

  /** Counters of the writes so far. */
  get stats(): FileStoreStats {
    return { ...this.counters };
  }

  /**
   * Reads and verifies the file; unless read-only, takes the writer lock and repairs a torn tail
   * (saving its bytes first). Throws `ChainCorruptError` (`chain_corrupt`) for corruption before the
   * tail, `ChainError` `not_a_chain_file` for a file that is not a chain file, `chain_file_missing`
   * when it does not exist and may not be created, `chain_locked` when another live writer has it.
   */
  async load(): Promise<StoreContents> {
    if (this.loaded) throw new ChainError('invalid_argument', 'the store is already loaded');
    this.loaded = true;
    let created = false;
    let buf: Buffer;
    if (this.readOnly) {
      buf = await this.readOrMissing();
    } else {
      this.lockPath = acquireChainLock(this.path);
      try {
        try {
          this.handle = await open(this.path, 'r+');
        } catch (err) {
          if (errnoCode(err) !== 'ENOENT' || !this.create) throw this.missing(err);
          writeFileAtomic(this.path, headerBytes(), { mode: 0o644 });
          created = true;
          this.handle = await open(this.path, 'r+');
        }
        buf = await this.handle.readFile();
      } catch (err) {
        await this.release();
        throw err;
      }
    }
    try {
      return await this.scan(buf, created);
    } catch (err) {
      await this.release();
      throw err;
    }
  }

  private async release(): Promise<void> {
    try {
      await this.handle?.close();
    } finally {
      this.handle = undefined;
      if (this.lockPath !== undefined) releaseChainLock(this.lockPath);
      this.lockPath = undefined;
    }
  }

  private async scan(buf: Buffer, created: boolean): Promise<StoreContents> {
    if (isForeignFile(buf)) {
      throw new ChainError('not_a_chain_file', `${this.path} is not a Heddle chain file (bad header)`);
    }
    const scan = scanChainBytes(buf, true);
    if (scan.failure !== null) throw new ChainCorruptError(scan.failure, this.path);
    let tornTail: TornTail | null = scan.tornTail;
    this.position = scan.validLength;
    this.starts = scan.starts;
    if (this.handle !== undefined) {
      // Never destroy evidence silently: the bytes about to be removed are saved first.
      const savedTo =
        tornTail !== null && tornTail.length > 0
          ? saveTornBytes(this.path, tornTail.offset, buf.subarray(tornTail.offset))
          : undefined;
      if (scan.headerMissing) {
        const header = headerBytes();
        await this.handle.truncate(0);
        await this.writeAll(header, 0);
        await this.handle.datasync();
        this.position = header.length;
      } else if (tornTail !== null) {
        await this.handle.truncate(scan.validLength);
        await this.handle.datasync();
      }
      if (tornTail !== null) {
        tornTail = { ...tornTail, repaired: true, ...(savedTo === undefined ? {} : { savedTo }) };
      }
    }
    this.end = this.position;
    return { events: scan.events, verified: true, tornTail, created };
  }

  /** Queues the record; resolves once it is written and fdatasynced (group commit). */
  append(_event: ChainEvent, record: string): Promise<void> {
    if (this.readOnly)
      return Promise.reject(new ChainError('chain_read_only', `${this.path} is open read-only`));
    if (this.closed) return Promise.reject(new ChainError('chain_closed', `${this.path} is closed`));
    if (!this.loaded || this.handle === undefined) {
      return Promise.reject(new ChainError('invalid_argument', 'load() the store before appending'));
    }
    if (this.failed !== undefined) return Promise.reject(this.failure());
    this.starts.push(this.end);
    this.end += Buffer.byteLength(record, 'utf8') + 1;
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ text: `${record}\n`, resolve, reject });
      if (this.flushing === undefined) this.flushing = this.flushLoop();
    });
  }

  /**
   * Reads event `seq` back from the file (it must be durable: loaded, or appended and resolved), by
   * the offset index kept since `load()`: one read of its line, parsed and its two hashes checked.
   * Throws `ChainError` `invalid_argument` for a seq not stored, `chain_corrupt` when the bytes on
   * disk no longer hold that event (the file was changed under the store).
   */
  readEvent(seq: number): ChainEvent {
    const start = this.starts[seq];
    if (!Number.isSafeInteger(seq) || start === undefined) {
      throw new ChainError('invalid_argument', `${this.path} holds no event ${seq}`, { field: 'seq' });
    }
    const end = (this.starts[seq + 1] ?? this.end) - 1; // without the newline
    const buf = Buffer.allocUnsafe(end - start);
    const fd = this.handle?.fd ?? this.openForReading();
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, start + got);
      if (n === 0) break;
      got += n;
    }
    const r = got === buf.length ? parseRecord(buf) : undefined;
    if (r === undefined || isRecordProblem(r) || !r.hashOk || !r.payloadHashOk || r.seq !== seq) {
      throw new ChainError(
        'chain_corrupt',
        `${this.path}: the record of event ${seq} at byte ${start} no longer reads back (the file changed under the store)`,
      );
    }
    const { payloadHashOk: _p, hashOk: _h, ...event } = r;
    return Object.freeze(event);
  }

  private openForReading(): number {
    this.readFd ??= openSync(this.path, 'r');
    return this.readFd;
  }

  /** Waits for queued appends, then closes the file and releases the writer lock. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flushing;
    if (this.readFd !== undefined) closeSync(this.readFd);
    this.readFd = undefined;
    await this.release();
  }

  private async flushLoop(): Promise<void> {
    // Let every append made in the current synchronous run join the first batch.
    await Promise.resolve();
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      try {
        let text = '';
        for (const p of batch) text += p.text;
        const bytes = Buffer.from(text, 'utf8');
        await this.writeAll(bytes, this.position);
        // cast: flush() runs only on an open store (append checks it), and close() waits for flushing first
        await (this.handle as FileHandle).datasync();
        this.position += bytes.length;
        const c = this.counters;
        c.batches++;
        c.syncs++;
        c.records += batch.length;
        c.bytes += bytes.length;
        if (batch.length > c.maxBatch) c.maxBatch = batch.length;
      } catch (err) {
        this.failed = err;
        const rest = this.queue;
        this.queue = [];
        for (const p of batch) p.reject(this.failure());
        for (const p of rest) p.reject(this.failure());
        break;
      }
      for (const p of batch) p.resolve();
    }
    this.flushing = undefined;
  }

  private async writeAll(bytes: Buffer, position: number): Promise<void> {
    // cast: called only from flush(), on an open store (see above)
    const handle = this.handle as FileHandle;
    let off = 0;
    while (off < bytes.length) {
      const { bytesWritten } = await handle.write(bytes, off, bytes.length - off, position + off);
      this.counters.writes++;
      off += bytesWritten;
    }
  }

  private failure(): ChainError {
    return new ChainError(
      'chain_store_failed',
      `writing ${this.path} failed; the chain refuses further appends until reopened: ${String(this.failed)}`,
      { cause: this.failed },
    );
  }

  private async readOrMissing(): Promise<Buffer> {
    try {
      return await readFile(this.path);
    } catch (err) {
      throw this.missing(err);
    }
  }

  private missing(err: unknown): unknown {
    if (errnoCode(err) !== 'ENOENT') return err;
    return new ChainError('chain_file_missing', `${this.path} does not exist`, { cause: err });
  }
}
