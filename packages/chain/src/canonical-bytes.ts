import { DEFAULT_JSON_LIMITS } from '@heddle/envelope';

// A validator for canonical JSON given as UTF-8 bytes, which builds no values: the verification hot
// path uses it to check that a stored payload is exactly what `canonicalPayload` produces, without
// decoding or re-encoding it. The bytes must already be known to be valid UTF-8 (then no lone
// surrogate can occur). Iterative, with an explicit stack, and written for speed.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OBJECT = 1;
const ARRAY = 2;

// Per open container: its type, and for objects the previous key's range and whether it needs
// decoding to compare (escapes or non-ASCII bytes). Grown on demand; never shrunk.
let kinds = new Uint8Array(64);
let keyStart = new Int32Array(64);
let keyEnd = new Int32Array(64);
let keySpecial = new Uint8Array(64);

/** Set by scanString: whether the string just scanned had escapes or non-ASCII bytes. */
let lastSpecial = 0;

// Byte classes inside a string: 0 plain ASCII, 1 non-ASCII (UTF-8), 2 quote, 3 backslash, 4 control.
const CLASS: Uint8Array = new Uint8Array(256);
for (let c = 0; c < 256; c++) {
  CLASS[c] = c < 0x20 ? 4 : c === QUOTE ? 2 : c === BACKSLASH ? 3 : c >= 0x80 ? 1 : 0;
}

/** Scans the string whose opening quote is at `i`; returns the index after its closing quote, or -1. */
function scanString(b: Buffer, i: number, stop: number): number {
  i++;
  let special = 0;
  while (i < stop) {
    // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
    const c = b[i] as number;
    // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
    const k = CLASS[c] as number;
    if (k < 2) {
      special |= k;
      i++;
      continue;
    }
    if (c === QUOTE) {
      lastSpecial = special;
      return i + 1;
    }
    if (c !== BACKSLASH) return -1; // a raw control character
    special = 1;
    const e = b[i + 1];
    // JSON.stringify's escapes: \" \\ \b \f \n \r \t, and \u00xx (lower-case hex) for other controls.
    if (e === 0x22 || e === 0x5c || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74) {
      i += 2;
      continue;
    }
    if (e !== 0x75 || b[i + 2] !== 0x30 || b[i + 3] !== 0x30) return -1;
    // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
    const h = b[i + 4] as number;
    // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
    const l = b[i + 5] as number;
    if (h !== 0x30 && h !== 0x31) return -1;
    const low = l >= 0x30 && l <= 0x39 ? l - 0x30 : l >= 0x61 && l <= 0x66 ? l - 0x57 : -1;
    if (low < 0) return -1;
    const code = (h - 0x30) * 16 + low;
    if (code === 0x08 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d) return -1;
    i += 6;
  }
  return -1;
}

/** Scans an integer at `i`; returns the index after it, or -1 if it is not a canonical safe integer. */
function scanNumber(b: Buffer, i: number, stop: number): number {
  const start = i;
  if (b[i] === 0x2d) i++;
  const first = b[i];
  if (first === 0x30) return i === start ? i + 1 : -1; // "0"; "-0" is not canonical
  if (first === undefined || first < 0x31 || first > 0x39 || i >= stop) return -1;
  i++;
  while (i < stop) {
    // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
    const c = b[i] as number;
    if (c < 0x30 || c > 0x39) break;
    i++;
  }
  if (i - start >= 16 && !Number.isSafeInteger(Number(b.toString('latin1', start, i)))) return -1;
  return i;
}

function literalEnd(b: Buffer, i: number, stop: number, word: string): number {
  if (i + word.length > stop) return -1;
  for (let j = 0; j < word.length; j++) if (b[i + j] !== word.charCodeAt(j)) return -1;
  return i + word.length;
}

/** True when key [s, e) sorts strictly after key [ps, pe) by UTF-16 code units (quotes included). */
function keyAfter(
  b: Buffer,
  s: number,
  e: number,
  special: number,
  ps: number,
  pe: number,
  pSpecial: number,
): boolean {
  if (special === 0 && pSpecial === 0) {
    // Plain ASCII: bytes are UTF-16 code units.
    const n = Math.min(e - s, pe - ps) - 1; // compare the contents; the closing quote ends the shorter
    for (let j = 1; j < n; j++) {
      // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
      const x = b[s + j] as number;
      // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
      const y = b[ps + j] as number;
      if (x !== y) return x > y;
    }
    return e - s > pe - ps;
  }
  // cast: both ranges are JSON string literals the scanner checked, so JSON.parse returns strings
  const key = JSON.parse(b.toString('utf8', s, e)) as string;
  // cast: as above
  const prev = JSON.parse(b.toString('utf8', ps, pe)) as string;
  return key > prev;
}

/**
 * True when `bytes[start..stop)` is exactly the canonical JSON that `canonicalPayload` produces for
 * some value, within the depth limit: no white space, keys sorted by UTF-16 code units and unique,
 * strings escaped as `JSON.stringify` does, safe integers only, no `-0`. The bytes must be valid
 * UTF-8 (checked by the caller). Builds no values.
 */
export function isCanonicalJsonBytes(
  bytes: Buffer,
  start = 0,
  stop: number = bytes.length,
  maxDepth: number = DEFAULT_JSON_LIMITS.maxDepth,
): boolean {
  if (kinds.length < maxDepth + 1) {
    kinds = new Uint8Array(maxDepth + 1);
    keyStart = new Int32Array(maxDepth + 1);
    keyEnd = new Int32Array(maxDepth + 1);
    keySpecial = new Uint8Array(maxDepth + 1);
  }
  const b = bytes;
  let i = start;
  let depth = 0;
  let expectKey = false;
  for (;;) {
    if (i >= stop) return false;
    if (expectKey) {
      // A member: "key":value, the key after the previous one of this object.
      if (b[i] !== QUOTE) return false;
      const s = i;
      i = scanString(b, i, stop);
      if (i < 0) return false;
      const d = depth - 1;
      // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
      if (keyStart[d] as number) {
        // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
        const ps = (keyStart[d] as number) - 1;
        // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
        if (!keyAfter(b, s, i, lastSpecial, ps, keyEnd[d] as number, keySpecial[d] as number)) return false;
      }
      keyStart[d] = s + 1; // stored plus one so that 0 means "no key yet"
      keyEnd[d] = i;
      keySpecial[d] = lastSpecial;
      if (b[i] !== 0x3a) return false;
      i++;
      expectKey = false;
      continue;
    }
    // A value.
    // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
    const c = b[i] as number;
    if (c === 0x7b || c === 0x5b) {
      if (depth >= maxDepth) return false;
      i++;
      const close = c === 0x7b ? 0x7d : 0x5d;
      if (b[i] === close) {
        i++;
      } else {
        kinds[depth] = c === 0x7b ? OBJECT : ARRAY;
        keyStart[depth] = 0;
        depth++;
        expectKey = c === 0x7b;
        continue;
      }
    } else if (c === QUOTE) {
      i = scanString(b, i, stop);
    } else if (c === 0x74) {
      i = literalEnd(b, i, stop, 'true');
    } else if (c === 0x66) {
      i = literalEnd(b, i, stop, 'false');
    } else if (c === 0x6e) {
      i = literalEnd(b, i, stop, 'null');
    } else {
      i = scanNumber(b, i, stop);
    }
    if (i < 0) return false;
    // After a value: close containers, or a comma and the next member or element.
    for (;;) {
      if (depth === 0) return i === stop;
      const kind = kinds[depth - 1];
      const next = b[i];
      if (next === 0x2c) {
        i++;
        expectKey = kind === OBJECT;
        break;
      }
      if (next !== (kind === OBJECT ? 0x7d : 0x5d)) return false;
      i++;
      depth--;
    }
  }
}
