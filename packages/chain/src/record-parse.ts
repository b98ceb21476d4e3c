import { isUtf8 } from 'node:buffer';
import { errorMessage, parseJson } from '@heddle/envelope';
import { canonicalPayload } from './canonical.js';
import { isCanonicalJsonBytes } from './canonical-bytes.js';
import { eventShapeProblem } from './event.js';
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

/** The byte `"`. */
export const QUOTE = 0x22;
/** Latin-1 bytes of an ASCII literal. */
export const lit = (s: string): Buffer => Buffer.from(s, 'latin1');
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

/** True when the 64 bytes at `at` are lower-case hex digits. */
export function hexAt(buf: Buffer, at: number): boolean {
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
    // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
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
  // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
  while (i > floor && (buf[i - 1] as number) >= 0x30 && (buf[i - 1] as number) <= 0x39) i--;
  const n = stop - i;
  if (n === 0 || n > 16 || (n > 1 && buf[i] === 0x30)) return -1;
  return i;
}

function intAt(buf: Buffer, start: number, stop: number): number {
  let v = 0;
  // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
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

/** A parseable record's problem with one field. */
export function problem(field: string, message: string): RecordProblem {
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
      message: `record is not valid JSON: ${errorMessage(err)}`,
      unparseable: !syntaxOk,
    };
  }
  const shape = eventShapeProblem(value);
  if (shape !== null) return problem(shape.field, shape.message);
  try {
    // cast: eventShapeProblem found nothing wrong, so value is an object with a payload
    canonicalPayload((value as { payload: unknown }).payload);
  } catch (err) {
    return problem('payload', errorMessage(err));
  }
  return problem('$', 'record is not in canonical form (RFC 8785)');
}
