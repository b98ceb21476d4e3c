import { readdirSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { errnoCode } from '@heddle/envelope';
import { Chain } from './chain.js';
import type { ChainOptions } from './chain-types.js';
import { ChainError } from './errors.js';
import { isForeignFile, scanChainBytes, type TornTail } from './file-format.js';
import { FileChainStore } from './file-store.js';
import { GENESIS_PREV_HASH } from './hashing.js';
import { merkleRoot } from './merkle-verify.js';
import { type ChainStore, MemoryChainStore } from './store.js';
import { anchorFailure, failure } from './verify.js';
import type { VerifyFailure, VerifyOptions, VerifyResult } from './verify-types.js';

/** Opens a chain over any store (loads and verifies its events). */
export function openChain(store: ChainStore, options: ChainOptions = {}): Promise<Chain> {
  return Chain.open(store, options);
}

/** Opens a chain kept in memory (over a new `MemoryChainStore`, or the given one). */
export function openMemoryChain(options: ChainOptions & { store?: MemoryChainStore } = {}): Promise<Chain> {
  return Chain.open(options.store ?? new MemoryChainStore(), options);
}

/** Options of {@link openChainFile}. */
export interface OpenChainFileOptions extends ChainOptions {
  /**
   * Inspect only: nothing is written, a torn tail is reported in `openReport.tornTail` but not
   * repaired, appends are refused (`chain_read_only`).
   */
  readonly readOnly?: boolean;
  /** Create the file when missing (default true unless read-only). */
  readonly create?: boolean;
}

/**
 * Opens a chain file (the crash-safe file store). The file is read and fully verified; a torn tail is
 * truncated and reported in `chain.openReport.tornTail` (or only reported when `readOnly`). Throws
 * `ChainCorruptError` (naming seq, line and byte offset) for corruption before the tail,
 * `ChainError` `not_a_chain_file` or `chain_file_missing`.
 */
export function openChainFile(path: string, options: OpenChainFileOptions = {}): Promise<Chain> {
  const store = new FileChainStore(path, {
    readOnly: options.readOnly ?? false,
    ...(options.create === undefined ? {} : { create: options.create }),
  });
  return Chain.open(store, options);
}

/** The result of {@link verifyChainFile}. */
export interface FileVerifyResult extends VerifyResult {
  /** The torn tail, if any (then `ok` is false and `failure.reason` is `torn_tail`). */
  readonly tornTail: TornTail | null;
  /** Size of the file in bytes. */
  readonly bytes: number;
  /**
   * Torn tails removed by earlier repairs and kept beside the file (`<file>.torn-<offset>[.n]`), oldest
   * offset first. Not a failure of the chain (what it holds verifies), but bytes a crash cut off that a
   * person should look at: the chain never drops them silently.
   */
  readonly quarantined: readonly QuarantinedTail[];
}

/** A torn tail saved beside a chain file by a repair (see {@link FileVerifyResult.quarantined}). */
export interface QuarantinedTail {
  /** The side file's path. */
  readonly path: string;
  /** The byte offset in the chain file where the torn bytes started. */
  readonly offset: number;
  /** How many bytes it holds. */
  readonly bytes: number;
}

/** The torn tails saved beside `path` by repairs (`<file>.torn-<offset>`, `.torn-<offset>.<n>`). */
export function quarantinedTails(path: string): QuarantinedTail[] {
  const prefix = `${basename(path)}.torn-`;
  let names: string[];
  try {
    names = readdirSync(dirname(path));
  } catch {
    return [];
  }
  const out: QuarantinedTail[] = [];
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const m = /^(\d{1,15})(?:\.(\d{1,6}))?$/.exec(name.slice(prefix.length));
    if (m === null) continue;
    const file = join(dirname(path), name);
    try {
      const st = statSync(file);
      if (st.isFile()) out.push({ path: file, offset: Number(m[1]), bytes: st.size });
    } catch {
      // removed meanwhile
    }
  }
  return out.sort((a, b) => a.offset - b.offset || a.path.localeCompare(b.path));
}

/**
 * Reads and verifies a chain file without changing it: every record parsed, every hash recomputed,
 * every link checked, optionally a checkpoint. Reports the first bad event (seq, line, byte offset,
 * reason), including a torn tail (`torn_tail`), and lists the torn tails earlier repairs saved beside
 * the file (`quarantined`). Throws only when the file cannot be read
 * (`chain_file_missing`, I/O errors) or is not a chain file (`not_a_chain_file`).
 */
export async function verifyChainFile(path: string, options: VerifyOptions = {}): Promise<FileVerifyResult> {
  let buf: Buffer;
  try {
    buf = await readFile(path);
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') {
      throw new ChainError('chain_file_missing', `${path} does not exist`, { cause: err });
    }
    throw err;
  }
  if (isForeignFile(buf))
    throw new ChainError('not_a_chain_file', `${path} is not a Heddle chain file (bad header)`);
  const scan = scanChainBytes(buf, false);
  const n = scan.size;
  const head = n === 0 ? GENESIS_PREV_HASH : scan.hashAt(n - 1);
  let first: VerifyFailure | null = scan.failure;
  if (first === null && scan.tornTail !== null) {
    const t = scan.tornTail;
    first = failure('torn_tail', t.seq, `torn tail: ${t.reason} (${t.length} bytes)`, {
      line: t.line,
      offset: t.offset,
    });
  }
  const anchor = options.checkpoint;
  const bad =
    anchor === undefined
      ? first
      : anchorFailure(anchor, n, first, scan.hashAt, (size) =>
          merkleRoot(Array.from({ length: size }, (_, i) => scan.hashAt(i))),
        );
  return {
    ok: bad === null,
    size: n,
    head,
    failure: bad,
    tornTail: scan.tornTail,
    bytes: buf.length,
    quarantined: quarantinedTails(path),
  };
}
