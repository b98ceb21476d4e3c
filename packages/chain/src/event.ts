import { isHex, type JsonValue, toHex } from '@heddle/envelope';
import { canonicalPayload } from './canonical.js';
import { ChainError } from './errors.js';
import { eventHashBytes, headerText, payloadHashOfCanonical } from './hashing.js';
import { assertIdentifier, isIdentifier } from './identifiers.js';

/**
 * One audit event. `hash` (64 hex) is what a decision id names; see docs/chain.md for the exact
 * hashing. Events are frozen; do not mutate their payloads either (`verify()` would report it).
 */
export interface ChainEvent {
  /** Position in the chain, starting at 0. */
  readonly seq: number;
  /** Milliseconds since the Unix epoch (integer), from the chain's clock. */
  readonly ts: number;
  /** Who wrote it: a dotted lower-case identifier (Heddle's own are `ChainSource` of `@heddle/model`). */
  readonly source: string;
  /** What happened: a dotted lower-case identifier (Heddle's own are `ChainKind` of `@heddle/model`). */
  readonly kind: string;
  /** Any canonical-JSON value (integers only). */
  readonly payload: JsonValue;
  /** BLAKE3(`heddle.chain.payload.v1\n` || canonical payload), 64 hex. */
  readonly payload_hash: string;
  /** The previous event's `hash`, or 64 zeros for seq 0. */
  readonly prev_hash: string;
  /** BLAKE3(`heddle.chain.event.v1\n` || canonical header), 64 hex. */
  readonly hash: string;
}

/** A freshly built event and its file record (so the payload is encoded only once). */
export interface BuiltEvent {
  readonly event: ChainEvent;
  /** The event's file record: its canonical JSON, without the trailing newline. */
  readonly record: string;
}

/**
 * Builds the event at `seq` after `prevHash`. Validates source and kind (`invalid_source`,
 * `invalid_kind`), the timestamp (`invalid_timestamp`) and the payload (`invalid_payload`). The
 * event's payload is a fresh copy decoded from the canonical text, so it is exactly what a reader of
 * the stored record gets back.
 */
export function buildEvent(
  seq: number,
  ts: number,
  source: string,
  kind: string,
  payload: unknown,
  prevHash: string,
): BuiltEvent {
  assertIdentifier('source', source);
  assertIdentifier('kind', kind);
  if (!Number.isSafeInteger(ts) || ts < 0) {
    throw new ChainError(
      'invalid_timestamp',
      `ts must be a non-negative integer of milliseconds, got ${String(ts)}`,
      {
        field: 'ts',
      },
    );
  }
  const payloadText = canonicalPayload(payload);
  const payload_hash = payloadHashOfCanonical(payloadText);
  const header = { seq, ts, source, kind, payload_hash, prev_hash: prevHash };
  const hash = toHex(eventHashBytes(header));
  const event: ChainEvent = Object.freeze({
    seq,
    ts,
    source,
    kind,
    // cast: JSON.parse returns JSON values
    payload: JSON.parse(payloadText) as JsonValue,
    payload_hash,
    prev_hash: prevHash,
    hash,
  });
  return { event, record: recordText(hash, kind, payloadText, payload_hash, prevHash, seq, source, ts) };
}

/**
 * The file record of an event: its canonical JSON (keys hash, kind, payload, payload_hash, prev_hash,
 * seq, source, ts), given the canonical payload text.
 */
export function recordText(
  hash: string,
  kind: string,
  payloadText: string,
  payloadHash: string,
  prevHash: string,
  seq: number,
  source: string,
  ts: number,
): string {
  return `{"hash":"${hash}","kind":"${kind}","payload":${payloadText},"payload_hash":"${payloadHash}","prev_hash":"${prevHash}","seq":${seq},"source":"${source}","ts":${ts}}`;
}

/** The canonical JSON of an event (what the file store writes as one line, without the newline). */
export function encodeEvent(event: ChainEvent): string {
  const problem = eventShapeProblem(event);
  if (problem !== null) throw new ChainError('invalid_argument', `not an event: ${problem.message}`, problem);
  return recordText(
    event.hash,
    event.kind,
    canonicalPayload(event.payload),
    event.payload_hash,
    event.prev_hash,
    event.seq,
    event.source,
    event.ts,
  );
}

/** Recomputes `payload_hash` of any payload (64 hex). Throws `invalid_payload` if it cannot be encoded. */
export function computePayloadHash(payload: unknown): string {
  return payloadHashOfCanonical(canonicalPayload(payload));
}

/**
 * Recomputes the event hash (64 hex) from an event's header fields, which must be well-formed
 * (throws `invalid_argument` naming the field otherwise).
 */
export function computeEventHash(header: {
  seq: number;
  ts: number;
  source: string;
  kind: string;
  payload_hash: string;
  prev_hash: string;
}): string {
  const problem = headerShapeProblem(header);
  if (problem !== null) throw new ChainError('invalid_argument', problem.message, problem);
  return toHex(eventHashBytes(header));
}

/** The canonical header text an event hash covers (without the tag). Fields must be well-formed. */
export function eventHeaderText(header: {
  seq: number;
  ts: number;
  source: string;
  kind: string;
  payload_hash: string;
  prev_hash: string;
}): string {
  return headerText(header);
}

const EVENT_KEYS: ReadonlySet<string> = new Set([
  'seq',
  'ts',
  'source',
  'kind',
  'payload',
  'payload_hash',
  'prev_hash',
  'hash',
]);

/** What is wrong with the shape of a supposed event header, or null. */
export function headerShapeProblem(v: Record<string, unknown>): { field: string; message: string } | null {
  if (typeof v.seq !== 'number' || !Number.isSafeInteger(v.seq) || v.seq < 0)
    return bad('seq', 'a non-negative integer');
  if (typeof v.ts !== 'number' || !Number.isSafeInteger(v.ts) || v.ts < 0)
    return bad('ts', 'a non-negative integer');
  if (!isIdentifier(v.source)) return bad('source', 'a dotted lower-case identifier');
  if (!isIdentifier(v.kind)) return bad('kind', 'a dotted lower-case identifier');
  if (!isHex(v.payload_hash, 32)) return bad('payload_hash', '64 lower-case hex characters');
  if (!isHex(v.prev_hash, 32)) return bad('prev_hash', '64 lower-case hex characters');
  return null;
}

/** What is wrong with the shape of a supposed event (fields present, typed, no extras), or null. */
export function eventShapeProblem(v: unknown): { field: string; message: string } | null {
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    return { field: '$', message: 'not an object' };
  // cast: a non-array object (checked just above): its fields are checked one by one below
  const rec = v as Record<string, unknown>;
  for (const k of Object.keys(rec)) {
    if (!EVENT_KEYS.has(k)) return { field: k, message: `unknown field ${JSON.stringify(k)}` };
  }
  const h = headerShapeProblem(rec);
  if (h !== null) return h;
  if (!isHex(rec.hash, 32)) return bad('hash', '64 lower-case hex characters');
  if (!('payload' in rec) || rec.payload === undefined)
    return { field: 'payload', message: 'payload is missing' };
  return null;
}

function bad(field: string, what: string): { field: string; message: string } {
  return { field, message: `${field} must be ${what}` };
}
