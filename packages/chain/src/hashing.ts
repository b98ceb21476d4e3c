import { blake3, isHex, toHex } from '@heddle/envelope';

/**
 * BLAKE3 domain tag of an event hash: `hash = BLAKE3(tag || canonical event header)`. Chain-internal
 * (these are hash tags, not signature tags); each ends with a newline so no tag prefixes another.
 */
export const EVENT_HASH_TAG = 'heddle.chain.event.v1\n';
/** BLAKE3 domain tag of a payload hash: `payload_hash = BLAKE3(tag || canonical payload)`. */
export const PAYLOAD_HASH_TAG = 'heddle.chain.payload.v1\n';

/** The `prev_hash` of the first event (seq 0): 64 zeros. Also the head of an empty chain. */
export const GENESIS_PREV_HASH: string = '0'.repeat(64);

// One reusable buffer for `tag || bytes`, grown on demand, so hashing needs no allocation per call.
let scratch: Buffer = Buffer.allocUnsafe(64 * 1024);

function ensure(size: number): Buffer {
  if (scratch.length < size) scratch = Buffer.allocUnsafe(Math.max(size, scratch.length * 2));
  return scratch;
}

/** BLAKE3 of the UTF-8 bytes of `tag + text` (tag must be ASCII). */
export function taggedHashOfText(tag: string, text: string): Uint8Array {
  // A UTF-16 unit takes at most 3 UTF-8 bytes.
  const buf = ensure(tag.length + text.length * 3);
  buf.write(tag, 0, 'latin1');
  const n = buf.write(text, tag.length, 'utf8');
  return blake3(buf.subarray(0, tag.length + n));
}

const HEX_CODES: readonly number[] = Array.from('0123456789abcdef', (ch) => ch.charCodeAt(0));

/** True when `hex` is the lower-case hex spelling of `bytes` (compared without allocating). */
export function equalsHex(bytes: Uint8Array, hex: string): boolean {
  if (hex.length !== bytes.length * 2) return false;
  for (let i = 0; i < bytes.length; i++) {
    // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
    const b = bytes[i] as number;
    if (hex.charCodeAt(2 * i) !== HEX_CODES[b >> 4] || hex.charCodeAt(2 * i + 1) !== HEX_CODES[b & 15])
      return false;
  }
  return true;
}

/** `payload_hash` (64 hex) of a payload given as its canonical JSON text. */
export function payloadHashOfCanonical(canonicalPayloadText: string): string {
  return toHex(taggedHashOfText(PAYLOAD_HASH_TAG, canonicalPayloadText));
}

/** The fields of an event that its hash covers (everything but `payload` and `hash`). */
export interface EventHeader {
  readonly seq: number;
  readonly ts: number;
  readonly source: string;
  readonly kind: string;
  readonly payload_hash: string;
  readonly prev_hash: string;
}

/**
 * The canonical JSON (RFC 8785) of an event header: keys in the order kind, payload_hash, prev_hash,
 * seq, source, ts. Built by template, which is exact because every field is an integer, lower-case hex
 * or a dotted identifier (none needs escaping); callers must have validated the fields.
 */
export function headerText(h: EventHeader): string {
  return `{"kind":"${h.kind}","payload_hash":"${h.payload_hash}","prev_hash":"${h.prev_hash}","seq":${h.seq},"source":"${h.source}","ts":${h.ts}}`;
}

/** The 32-byte event hash of a validated header: BLAKE3(EVENT_HASH_TAG || canonical header). */
export function eventHashBytes(h: EventHeader): Uint8Array {
  return taggedHashOfText(EVENT_HASH_TAG, headerText(h));
}

/** True when `value` looks like an event hash (64 lower-case hex). */
export function isEventHash(value: unknown): value is string {
  return isHex(value, 32);
}
