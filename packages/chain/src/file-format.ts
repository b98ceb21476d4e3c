import { isUtf8 } from 'node:buffer';
import type { ChainEvent } from './event.js';
import { GENESIS_PREV_HASH } from './hashing.js';
import {
  eventHashMatches,
  hexProblem,
  newRecordFields,
  parseRecordAt,
  payloadHashMatches,
  recordEvent,
  sameHash,
} from './record.js';
import { failure, linkFailure, seqFailure } from './verify.js';
import type { VerifyFailure } from './verify-types.js';

/** The first line of every chain file (then a newline): identifies the format and its version. */
export const CHAIN_FILE_HEADER = '{"format":"heddle.chain","version":1}';
const HEADER_LINE: Buffer = Buffer.from(`${CHAIN_FILE_HEADER}\n`, 'latin1');

/** An incomplete or unparseable last record found when a chain file was opened. */
export interface TornTail {
  /** Byte offset where the torn record starts: the file's valid length. */
  readonly offset: number;
  /** Number of bytes from `offset` to the end of the file. */
  readonly length: number;
  /** 1-based line number of the torn record (line 1 is the header). */
  readonly line: number;
  /** The seq the torn record would have had. */
  readonly seq: number;
  /** What is wrong with it. */
  readonly reason: string;
  /** True when the file was truncated to `offset` (opened for writing); false when only reported. */
  readonly repaired: boolean;
  /**
   * Where the removed bytes were saved before the truncation (`<file>.torn-<offset>`, mode 0600), so
   * that no evidence is destroyed silently. Absent when nothing was removed (read-only).
   */
  readonly savedTo?: string;
}

/** What scanning a chain file's bytes found. */
export interface ScanResult {
  /** The header is missing (empty file) or incomplete: the file holds no events yet. */
  readonly headerMissing: boolean;
  /** The verified events, in order (empty when scanned without `keepEvents`). */
  readonly events: ChainEvent[];
  /** Number of verified events. */
  readonly size: number;
  /** The hash (64 hex) of verified event `i`. */
  readonly hashAt: (i: number) => string;
  /** The torn tail, if any (with `repaired: false`). */
  readonly tornTail: TornTail | null;
  /** The first failure before the tail (corruption or tampering), or null. */
  readonly failure: VerifyFailure | null;
  /** Byte length of the header plus the verified records. */
  readonly validLength: number;
  /** The byte offset of each verified record's line (record `i` ends one byte before `starts[i + 1]`, or `validLength`). */
  readonly starts: number[];
}

/** True when `buf` does not start with the chain file header and is not a prefix of it either. */
export function isForeignFile(buf: Uint8Array): boolean {
  const n = Math.min(buf.length, HEADER_LINE.length);
  return Buffer.compare(Buffer.from(buf.buffer, buf.byteOffset, n), HEADER_LINE.subarray(0, n)) !== 0;
}

/** The header line bytes (header plus newline). */
export function headerBytes(): Buffer {
  return Buffer.from(HEADER_LINE);
}

const GENESIS_BYTES: Buffer = Buffer.from(GENESIS_PREV_HASH, 'latin1');

/**
 * Scans and verifies the bytes of a chain file (see docs/chain.md, "File format"): the header, then
 * one canonical event record per line. Stops at the first bad record before the tail. The torn tail
 * is the bytes after the last newline, if any, or else the last line when it is not UTF-8 or not
 * JSON. The caller must have checked {@link isForeignFile} first.
 */
export function scanChainBytes(buf: Buffer, keepEvents: boolean): ScanResult {
  const events: ChainEvent[] = [];
  const offsets: number[] = [];
  const starts: number[] = [];
  const hashAt = (i: number): string => {
    // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
    const at = offsets[i] as number;
    return buf.toString('latin1', at, at + 64);
  };
  if (buf.length < HEADER_LINE.length) {
    const tornTail =
      buf.length === 0
        ? null
        : {
            offset: 0,
            length: buf.length,
            line: 1,
            seq: 0,
            reason: 'incomplete file header',
            repaired: false,
          };
    return { headerMissing: true, events, size: 0, hashAt, tornTail, failure: null, validLength: 0, starts };
  }
  const lastNewline = buf.lastIndexOf(0x0a);
  // One UTF-8 check of the whole file; lines are checked one by one only when it fails.
  const utf8Checked = isUtf8(buf);
  const f = newRecordFields();
  let pos = HEADER_LINE.length;
  let line = 2;
  let seq = 0;
  let prevBuf: Buffer = GENESIS_BYTES;
  let prevAt = 0;
  let bad: VerifyFailure | null = null;
  let tornTail: TornTail | null = null;
  while (pos <= lastNewline) {
    const end = buf.indexOf(0x0a, pos);
    const problem = parseRecordAt(buf, pos, end, f, utf8Checked);
    if (problem !== null) {
      if (problem.unparseable && end === buf.length - 1) {
        tornTail = torn(pos, buf.length, line, seq, `last record unparseable: ${problem.message}`);
      } else {
        bad = failure('malformed', seq, problem.message, { line, offset: pos }, problem.field);
      }
      break;
    }
    const payloadOk = payloadHashMatches(buf, f);
    const hashOk = payloadOk && eventHashMatches(buf, f);
    const linkOk = hashOk && sameHash(prevBuf, prevAt, buf, f.prevAt);
    const hex = linkOk ? null : hexProblem(buf, f);
    if (hex !== null) {
      bad = failure('malformed', seq, hex.message, { line, offset: pos }, hex.field);
      break;
    }
    if (!payloadOk) {
      bad = failure('payload_hash_mismatch', seq, 'payload does not match payload_hash (payload edited)', {
        line,
        offset: pos,
      });
      break;
    }
    if (!hashOk) {
      bad = failure('hash_mismatch', seq, 'fields do not hash to hash (event edited)', { line, offset: pos });
      break;
    }
    if (f.seq !== seq) {
      const later = buf.indexOf(`"seq":${seq},"source":"`, end) !== -1;
      bad = seqFailure(seq, f.seq, later, { line, offset: pos });
      break;
    }
    if (!linkOk) {
      bad = linkFailure(seq, { line, offset: pos });
      break;
    }
    if (keepEvents) events.push(recordEvent(buf, f));
    offsets.push(f.hashAt);
    starts.push(pos);
    prevBuf = buf;
    prevAt = f.hashAt;
    seq++;
    line++;
    pos = end + 1;
  }
  if (bad === null && tornTail === null && pos < buf.length) {
    tornTail = torn(pos, buf.length, line, seq, 'incomplete last record (no terminating newline)');
  }
  return {
    headerMissing: false,
    events,
    size: seq,
    hashAt,
    tornTail,
    failure: bad,
    validLength: pos,
    starts,
  };
}

function torn(offset: number, end: number, line: number, seq: number, reason: string): TornTail {
  return { offset, length: end - offset, line, seq, reason, repaired: false };
}
