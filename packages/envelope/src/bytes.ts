/**
 * Byte helpers shared by every Heddle package: strict hex, UTF-8 and constant-size comparison.
 * Portable (browsers, edge runtimes): Node's `Buffer` is used only as a fast path when it exists.
 */

const HEX_RE = /^(?:[0-9a-f]{2})*$/;
// Created on first use, so that importing this module does no work.
let encoder: InstanceType<typeof TextEncoder> | undefined;
let decoder: InstanceType<typeof TextDecoder> | undefined;
let hexTable: string[] | undefined;

/** Node's Buffer when the platform has one (a fast path only; every function works without it). */
function nodeBuffer(): typeof Buffer | undefined {
  return typeof Buffer === 'function' ? Buffer : undefined;
}

/** Encodes bytes as lower-case hex. */
export function toHex(bytes: Uint8Array): string {
  const B = nodeBuffer();
  if (B) return B.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
  if (!hexTable) hexTable = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
  let out = '';
  // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
  for (let i = 0; i < bytes.length; i++) out += hexTable[bytes[i] as number];
  return out;
}

/**
 * Decodes lower-case hex. Throws a TypeError for upper case, odd length or any other character, so
 * that one value has exactly one spelling (signatures and hashes are compared as text elsewhere).
 * When `expectedLength` is given, the decoded length in bytes must equal it.
 */
export function fromHex(hex: string, expectedLength?: number): Uint8Array {
  if (typeof hex !== 'string' || !HEX_RE.test(hex)) {
    throw new TypeError('expected lower-case hex with an even number of digits');
  }
  if (expectedLength !== undefined && hex.length !== expectedLength * 2) {
    throw new TypeError(
      `expected ${expectedLength} bytes (${expectedLength * 2} hex digits), got ${hex.length / 2}`,
    );
  }
  const B = nodeBuffer();
  if (B) return new Uint8Array(B.from(hex, 'hex'));
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/** True when `hex` is lower-case hex of exactly `bytes` bytes. */
export function isHex(hex: unknown, bytes: number): hex is string {
  return typeof hex === 'string' && hex.length === bytes * 2 && HEX_RE.test(hex);
}

/** UTF-8 encodes a string. */
export function utf8(text: string): Uint8Array {
  encoder ??= new TextEncoder();
  return encoder.encode(text);
}

/**
 * The length in bytes of the UTF-8 encoding of `text` (what every string limit of the protocol counts;
 * a lone surrogate counts as the three bytes of U+FFFD, as `TextEncoder` and `Buffer` encode it),
 * without encoding it.
 */
export function utf8Length(text: string): number {
  const B = nodeBuffer();
  if (B) return B.byteLength(text, 'utf8');
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 4;
        i++;
      } else n += 3;
    } else n += 3;
  }
  return n;
}

/** Decodes UTF-8, throwing a TypeError on malformed input instead of inserting replacement characters. */
export function fromUtf8(bytes: Uint8Array): string {
  decoder ??= new TextDecoder('utf-8', { fatal: true });
  return decoder.decode(bytes);
}

/** Concatenates byte arrays into a new one. */
export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  let length = 0;
  for (const p of parts) length += p.length;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}

/** Compares two byte arrays in time that depends only on their lengths. */
export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}

/** True for a Uint8Array (Buffers included) of exactly `length` bytes. */
export function isBytes(value: unknown, length?: number): value is Uint8Array {
  return value instanceof Uint8Array && (length === undefined || value.length === length);
}
