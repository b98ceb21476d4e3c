import { isUtf8 } from 'node:buffer';
import { blake3, type JsonValue, parseJson } from '@heddle/envelope';
import { canonicalPayload } from './canonical.js';
import { isCanonicalJsonBytes } from './canonical-bytes.js';
import type { ChainEvent } from './event.js';
import { eventShapeProblem } from './event.js';
import { EVENT_HASH_TAG, PAYLOAD_HASH_TAG } from './hashing.js';
import { MAX_IDENTIFIER_LENGTH } from './identifiers.js';

// A record is the canonical JSON of an event, so its layout is fixed:
//   {"hash":"H","kind":"K","payload":P,"payload_hash":"H","prev_hash":"H","seq":N,"source":"S","ts":N}
// It is parsed here directly on the file's bytes, without decoding it into strings: the verification
// hot path then allocates almost nothing per event.

/** Offsets of a record's fields in the buffer, filled in by {@link parseRecordAt}. */
export interface RecordFields {
  hashAt: number;
  kindStart: number;
  kindEnd: number;
  payloadStart: number;
  payloadEnd: number;
  payloadHashAt: number;
  prevAt: number;
  seq: number;
  seqStart: number;
  seqEnd: number;
  sourceStart: number;
  sourceEnd: number;
  ts: number;
  tsStart: number;
  tsEnd: number;
}

/** Why a record could not be parsed. `unparseable` means not UTF-8 or not JSON at all. */
export interface RecordProblem {
  readonly field: string;
  readonly message: string;
  readonly unparseable: boolean;
}

/** A fresh (zeroed) fields object, to be reused from record to record. */
export function newRecordFields(): RecordFields {
  return {
    hashAt: 0,
    kindStart: 0,
    kindEnd: 0,
    payloadStart: 0,
    payloadEnd: 0,
    payloadHashAt: 0,
    prevAt: 0,
    seq: 0,
    seqStart: 0,
    seqEnd: 0,
    sourceStart: 0,
    sourceEnd: 0,
    ts: 0,
    tsStart: 0,
    tsEnd: 0,
  };
}

/** Largest payload accepted in bytes (as canonical JSON), as for appends. */
const MAX_PAYLOAD_BYTES = 1024 * 1024;
/** Largest record accepted: a 1 MiB payload plus the other fields. */
const MAX_RECORD_BYTES: number = MAX_PAYLOAD_BYTES + 1024;

const QUOTE = 0x22;
const lit = (s: string): Buffer => Buffer.from(s, 'latin1');
const L_HASH = lit('{"hash":"');
const L_KIND = lit('","kind":"');
const L_PAYLOAD = lit('","payload":');
const L_PAYLOAD_HASH = lit(',"payload_hash":"');
const L_PREV = lit('","prev_hash":"');
const L_SEQ = lit('","seq":');
const L_SOURCE = lit(',"source":"');
const L_TS = lit('","ts":');

function isHexByte(c: number | undefined): boolean {
  return c !== undefined && ((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66));
}

function hexAt(buf: Buffer, at: number): boolean {
  for (let i = at; i < at + 64; i++) if (!isHexByte(buf[i])) return false;
  return true;
}

function litAt(buf: Buffer, at: number, word: Buffer): boolean {
  if (at < 0 || at + word.length > buf.length) return false;
  for (let i = 0; i < word.length; i++) if (buf[at + i] !== word[i]) return false;
  return true;
}

/** End of a dotted lower-case identifier starting at `at` (exclusive), or -1 if there is none. */
function identifierEnd(buf: Buffer, at: number, limit: number): number {
  let i = at;
  let segmentStart = true;
  while (i < limit) {
    const c = buf[i] as number;
    if (c >= 0x61 && c <= 0x7a) segmentStart = false;
    else if ((c >= 0x30 && c <= 0x39) || c === 0x5f) {
      if (segmentStart) return -1;
    } else if (c === 0x2e) {
      if (segmentStart) return -1;
      segmentStart = true;
    } else break;
    i++;
  }
  if (segmentStart || i - at > MAX_IDENTIFIER_LENGTH) return -1;
  return i;
}

/** Start of the digits ending at `stop` (exclusive), scanning backwards; -1 if not a canonical integer. */
function digitsStart(buf: Buffer, stop: number, floor: number): number {
  let i = stop;
  while (i > floor && (buf[i - 1] as number) >= 0x30 && (buf[i - 1] as number) <= 0x39) i--;
  const n = stop - i;
  if (n === 0 || n > 16 || (n > 1 && buf[i] === 0x30)) return -1;
  return i;
}

function intAt(buf: Buffer, start: number, stop: number): number {
  let v = 0;
  for (let i = start; i < stop; i++) v = v * 10 + ((buf[i] as number) - 0x30);
  return v;
}

/**
 * Parses the record `buf[start..end)` (a line without its newline) into `f`. Returns null when it is
 * the canonical JSON of a well-formed event with a canonical payload, or the problem. The bytes must
 * be valid UTF-8 unless `utf8Checked` is false. Never throws.
 */
export function parseRecordAt(
  buf: Buffer,
  start: number,
  end: number,
  f: RecordFields,
  utf8Checked = true,
): RecordProblem | null {
  if (end - start > MAX_RECORD_BYTES) {
    return { field: '$', message: `record is longer than ${MAX_RECORD_BYTES} bytes`, unparseable: false };
  }
  if (!utf8Checked && !isUtf8(buf.subarray(start, end))) {
    return { field: '$', message: 'record is not valid UTF-8', unparseable: true };
  }
  // Forward: {"hash":"H","kind":"K","payload":
  let p = start;
  // (The three hashes' hex digits are not checked here: a record passes the hash and link checks only
  // if they are lower-case hex. See hexProblem for the diagnosis after a failed check.)
  if (!litAt(buf, p, L_HASH)) return diagnose(buf, start, end);
  f.hashAt = p + L_HASH.length;
  p = f.hashAt + 64;
  if (!litAt(buf, p, L_KIND)) return diagnose(buf, start, end);
  f.kindStart = p + L_KIND.length;
  f.kindEnd = identifierEnd(buf, f.kindStart, end);
  if (f.kindEnd < 0 || !litAt(buf, f.kindEnd, L_PAYLOAD)) return diagnose(buf, start, end);
  f.payloadStart = f.kindEnd + L_PAYLOAD.length;
  // Backward: ,"payload_hash":"H","prev_hash":"H","seq":N,"source":"S","ts":N}
  if (buf[end - 1] !== 0x7d) return diagnose(buf, start, end);
  const floor = f.payloadStart;
  f.tsEnd = end - 1;
  f.tsStart = digitsStart(buf, f.tsEnd, floor);
  if (f.tsStart < 0 || !litAt(buf, f.tsStart - L_TS.length, L_TS)) return diagnose(buf, start, end);
  f.sourceEnd = f.tsStart - L_TS.length;
  let q = f.sourceEnd;
  while (q > floor && buf[q - 1] !== QUOTE) q--;
  f.sourceStart = q;
  if (identifierEnd(buf, f.sourceStart, f.sourceEnd) !== f.sourceEnd) return diagnose(buf, start, end);
  if (!litAt(buf, f.sourceStart - L_SOURCE.length, L_SOURCE)) return diagnose(buf, start, end);
  f.seqEnd = f.sourceStart - L_SOURCE.length;
  f.seqStart = digitsStart(buf, f.seqEnd, floor);
  if (f.seqStart < 0 || !litAt(buf, f.seqStart - L_SEQ.length, L_SEQ)) return diagnose(buf, start, end);
  f.prevAt = f.seqStart - L_SEQ.length - 64;
  if (f.prevAt < floor || !litAt(buf, f.prevAt - L_PREV.length, L_PREV)) return diagnose(buf, start, end);
  f.payloadHashAt = f.prevAt - L_PREV.length - 64;
  f.payloadEnd = f.payloadHashAt - L_PAYLOAD_HASH.length;
  if (f.payloadEnd <= f.payloadStart) return diagnose(buf, start, end);
  if (!litAt(buf, f.payloadEnd, L_PAYLOAD_HASH)) return diagnose(buf, start, end);
  f.seq = intAt(buf, f.seqStart, f.seqEnd);
  f.ts = intAt(buf, f.tsStart, f.tsEnd);
  if (!Number.isSafeInteger(f.seq)) return problem('seq', 'seq must be a safe integer');
  if (!Number.isSafeInteger(f.ts)) return problem('ts', 'ts must be a safe integer');
  if (f.payloadEnd - f.payloadStart > MAX_PAYLOAD_BYTES) {
    return problem('payload', `payload is longer than ${MAX_PAYLOAD_BYTES} bytes`);
  }
  if (!isCanonicalJsonBytes(buf, f.payloadStart, f.payloadEnd)) return diagnose(buf, start, end);
  return null;
}

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
    saved[i] = buf[at + i] as number;
    buf[at + i] = PAYLOAD_PREFIX[i] as number;
  }
  const digest = blake3(buf.subarray(at, f.payloadEnd)); // (does not throw for a valid view)
  for (let i = 0; i < n; i++) buf[at + i] = saved[i] as number;
  return equalsHexAt(digest, buf, f.payloadHashAt);
}

/** True when the record's header fields hash to its `hash`. */
export function eventHashMatches(buf: Buffer, f: RecordFields): boolean {
  const p = HEADER_PREFIX.length;
  const kindLength = f.kindEnd - f.kindStart;
  const m = p + kindLength + 1;
  const at = f.payloadEnd - m;
  for (let i = 0; i < m; i++) saved[i] = buf[at + i] as number;
  for (let i = 0; i < p; i++) buf[at + i] = HEADER_PREFIX[i] as number;
  for (let j = 0; j < kindLength; j++) {
    const src = f.kindStart + j; // the kind may lie in the region being overwritten: read the saved copy
    buf[at + p + j] = (src >= at && src < at + m ? saved[src - at] : buf[src]) as number;
  }
  buf[at + p + kindLength] = QUOTE;
  const digest = blake3(buf.subarray(at, f.tsEnd + 1)); // (does not throw for a valid view)
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

function problem(field: string, message: string): RecordProblem {
  return { field, message, unparseable: false };
}

// The slow path: say precisely what is wrong with a record that is not a canonical event.
function diagnose(buf: Buffer, start: number, end: number): RecordProblem {
  const line = buf.toString('utf8', start, end);
  let syntaxOk = true;
  try {
    JSON.parse(line);
  } catch {
    syntaxOk = false; // not JSON at all: the only kind of last record that counts as torn
  }
  let value: unknown;
  try {
    value = parseJson(line, { maxBytes: MAX_RECORD_BYTES, maxDepth: 64, integersOnly: false });
  } catch (err) {
    return {
      field: '$',
      message: `record is not valid JSON: ${(err as Error).message}`,
      unparseable: !syntaxOk,
    };
  }
  const shape = eventShapeProblem(value);
  if (shape !== null) return problem(shape.field, shape.message);
  try {
    canonicalPayload((value as { payload: unknown }).payload);
  } catch (err) {
    return problem('payload', (err as Error).message);
  }
  return problem('$', 'record is not in canonical form (RFC 8785)');
}
