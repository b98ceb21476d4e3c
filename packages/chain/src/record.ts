import { blake3, type JsonValue } from '@heddle/envelope';
import type { ChainEvent } from './event.js';
import { EVENT_HASH_TAG, PAYLOAD_HASH_TAG } from './hashing.js';
import {
  hexAt,
  lit,
  newRecordFields,
  parseRecordAt,
  problem,
  QUOTE,
  type RecordFields,
  type RecordProblem,
} from './record-parse.js';

// Parsing a record's bytes is in record-parse.ts; this module checks its hashes and decodes it.
export { newRecordFields, parseRecordAt, type RecordFields, type RecordProblem } from './record-parse.js';

// Hashing without copying the record: BLAKE3 needs `tag || payload` and `tag || {"kind":"K"` then
// the record's own suffix (the canonical header is `{"kind":"K"` followed by exactly the record's
// bytes from `,"payload_hash":"` to the closing brace; see hashing.ts, headerText). Both are made
// contiguous in place: the few bytes just before the hashed range are saved, overwritten with the
// tag (and kind), hashed together with the record's bytes, and restored before returning. The
// record always has enough bytes before the payload (at least 96) for this.
const PAYLOAD_PREFIX = lit(PAYLOAD_HASH_TAG);
const HEADER_PREFIX = lit(`${EVENT_HASH_TAG}{"kind":"`);
const saved: Buffer = Buffer.alloc(256);

/** True when the record's stored payload bytes hash to its `payload_hash`. */
export function payloadHashMatches(buf: Buffer, f: RecordFields): boolean {
  const n = PAYLOAD_PREFIX.length;
  const at = f.payloadStart - n;
  for (let i = 0; i < n; i++) {
    // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
    saved[i] = buf[at + i] as number;
    // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
    buf[at + i] = PAYLOAD_PREFIX[i] as number;
  }
  const digest = blake3(buf.subarray(at, f.payloadEnd)); // (does not throw for a valid view)
  // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
  for (let i = 0; i < n; i++) buf[at + i] = saved[i] as number;
  return equalsHexAt(digest, buf, f.payloadHashAt);
}

/** True when the record's header fields hash to its `hash`. */
export function eventHashMatches(buf: Buffer, f: RecordFields): boolean {
  const p = HEADER_PREFIX.length;
  const kindLength = f.kindEnd - f.kindStart;
  const m = p + kindLength + 1;
  const at = f.payloadEnd - m;
  // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
  for (let i = 0; i < m; i++) saved[i] = buf[at + i] as number;
  // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
  for (let i = 0; i < p; i++) buf[at + i] = HEADER_PREFIX[i] as number;
  for (let j = 0; j < kindLength; j++) {
    const src = f.kindStart + j; // the kind may lie in the region being overwritten: read the saved copy
    // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
    buf[at + p + j] = (src >= at && src < at + m ? saved[src - at] : buf[src]) as number;
  }
  buf[at + p + kindLength] = QUOTE;
  const digest = blake3(buf.subarray(at, f.tsEnd + 1)); // (does not throw for a valid view)
  // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
  for (let i = 0; i < m; i++) buf[at + i] = saved[i] as number;
  return equalsHexAt(digest, buf, f.hashAt);
}

/** True when the 64 bytes at `a` in `x` equal the 64 bytes at `b` in `y` (hash hex digits). */
export function sameHash(x: Buffer, a: number, y: Buffer, b: number): boolean {
  for (let i = 0; i < 64; i++) if (x[a + i] !== y[b + i]) return false;
  return true;
}

function equalsHexAt(digest: Uint8Array, buf: Buffer, at: number): boolean {
  for (let i = 0; i < digest.length; i++) {
    // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
    const b = digest[i] as number;
    if (buf[at + 2 * i] !== HEX[b >> 4] || buf[at + 2 * i + 1] !== HEX[b & 15]) return false;
  }
  return true;
}
const HEX: readonly number[] = Array.from('0123456789abcdef', (ch) => ch.charCodeAt(0));

/**
 * After a failed hash or link check: the field among hash, payload_hash and prev_hash that is not
 * 64 lower-case hex digits, if any (then the record is malformed rather than edited).
 */
export function hexProblem(buf: Buffer, f: RecordFields): RecordProblem | null {
  if (!hexAt(buf, f.hashAt)) return problem('hash', 'hash must be 64 lower-case hex characters');
  if (!hexAt(buf, f.payloadHashAt))
    return problem('payload_hash', 'payload_hash must be 64 lower-case hex characters');
  if (!hexAt(buf, f.prevAt)) return problem('prev_hash', 'prev_hash must be 64 lower-case hex characters');
  return null;
}

/** The event of a parsed record (decodes the strings and the payload). */
export function recordEvent(buf: Buffer, f: RecordFields): ChainEvent {
  return Object.freeze({
    seq: f.seq,
    ts: f.ts,
    source: buf.toString('latin1', f.sourceStart, f.sourceEnd),
    kind: buf.toString('latin1', f.kindStart, f.kindEnd),
    // cast: JSON.parse returns JSON values (the bytes were checked canonical)
    payload: JSON.parse(buf.toString('utf8', f.payloadStart, f.payloadEnd)) as JsonValue,
    payload_hash: buf.toString('latin1', f.payloadHashAt, f.payloadHashAt + 64),
    prev_hash: buf.toString('latin1', f.prevAt, f.prevAt + 64),
    hash: buf.toString('latin1', f.hashAt, f.hashAt + 64),
  });
}

/** A parsed record's fields as values, with the results of its two hash checks. */
export interface ParsedRecord extends ChainEvent {
  /** True when the stored payload bytes hash to `payload_hash`. */
  readonly payloadHashOk: boolean;
  /** True when the header fields hash to `hash`. */
  readonly hashOk: boolean;
}

/** Parses one record (a whole line without its newline) into values; for tests and tools. */
export function parseRecord(bytes: Buffer): ParsedRecord | RecordProblem {
  const f = newRecordFields();
  const bad = parseRecordAt(bytes, 0, bytes.length, f, false);
  if (bad !== null) return bad;
  return {
    ...recordEvent(bytes, f),
    payloadHashOk: payloadHashMatches(bytes, f),
    hashOk: eventHashMatches(bytes, f),
  };
}

/** True when parseRecord's answer is a problem. */
export function isRecordProblem(r: ParsedRecord | RecordProblem): r is RecordProblem {
  return 'unparseable' in r;
}
