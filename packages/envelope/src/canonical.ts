import { utf8Length } from './bytes.js';
import { EnvelopeError } from './errors.js';
import { DEFAULT_JSON_LIMITS, type JsonLimits } from './json-limits.js';

// The fast path: one string built by concatenation, no path bookkeeping. It bails out (BAIL) on
// anything it does not accept, and the slow path below then produces the precise, path-naming error.
const BAIL: unique symbol = Symbol('bail');
// A string with none of these needs no escaping and has no surrogates (so it is well-formed).
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const SPECIAL = /["\\\u0000-\u001f\ud800-\udfff]/;

function fastString(s: string): string {
  if (!SPECIAL.test(s)) return `"${s}"`;
  if (!s.isWellFormed()) throw BAIL;
  return JSON.stringify(s);
}

function fast(v: unknown, depth: number, maxDepth: number): string {
  switch (typeof v) {
    case 'string':
      return fastString(v);
    case 'number':
      if (!Number.isSafeInteger(v)) throw BAIL;
      return String(v); // String(-0) is "0"
    case 'boolean':
      return v ? 'true' : 'false';
    case 'object': {
      if (v === null) return 'null';
      if (depth >= maxDepth) throw BAIL; // also where a cycle ends up
      if (Array.isArray(v)) {
        let s = '[';
        for (let i = 0; i < v.length; i++) {
          if (i > 0) s += ',';
          s += fast(v[i], depth + 1, maxDepth);
        }
        return `${s}]`;
      }
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) throw BAIL;
      // cast: a plain object (prototype checked just above): reading its own keys
      const rec = v as Record<string, unknown>;
      const keys = Object.keys(rec).sort();
      let s = '{';
      let first = true;
      for (const k of keys) {
        const child = rec[k];
        if (child === undefined) continue; // absent and undefined are the same optional field
        s += first ? fastString(k) : `,${fastString(k)}`;
        first = false;
        s += `:${fast(child, depth + 1, maxDepth)}`;
      }
      return `${s}}`;
    }
    default:
      throw BAIL;
  }
}

/**
 * Serialises `value` as RFC 8785 (JCS) canonical JSON, restricted to integers: object keys sorted by
 * UTF-16 code units, no insignificant white space, strings escaped as ECMAScript `JSON.stringify`
 * does. Throws `EnvelopeError` with code `canonical_json` (naming the path) for floats, integers
 * outside the safe range, lone surrogates, `undefined`, functions, symbols, bigints, non-plain
 * objects, cycles, or when the depth or size bound is exceeded.
 */
export function canonicalJson(value: unknown, limits: JsonLimits = DEFAULT_JSON_LIMITS): string {
  let text: string | undefined;
  try {
    text = fast(value, 0, limits.maxDepth);
  } catch (err) {
    if (err !== BAIL && !(err instanceof RangeError)) throw err; // RangeError: stack or string length
  }
  if (text !== undefined && text.length <= limits.maxBytes && utf8Length(text) <= limits.maxBytes) {
    return text;
  }
  return canonicalJsonSlow(value, limits); // throws the precise error
}

// The slow path: the same output, but tracks the JSON path so that a refusal names the field.
function canonicalJsonSlow(value: unknown, limits: JsonLimits): string {
  const out: string[] = [];
  let size = 0;
  const seen = new Set<object>();

  const emit = (s: string): void => {
    size += s.length; // UTF-16 length is a lower bound of the UTF-8 length; checked exactly below.
    if (size > limits.maxBytes) fail('$', `exceeds ${limits.maxBytes} bytes`);
    out.push(s);
  };

  const walk = (v: unknown, path: string, depth: number): void => {
    if (v === null) {
      emit('null');
      return;
    }
    switch (typeof v) {
      case 'boolean':
        emit(v ? 'true' : 'false');
        return;
      case 'number':
        if (!Number.isSafeInteger(v)) fail(path, 'numbers must be safe integers');
        emit(String(v)); // String(-0) is "0"
        return;
      case 'string':
        if (!v.isWellFormed()) fail(path, 'string contains a lone surrogate');
        emit(JSON.stringify(v));
        return;
      case 'object':
        break;
      default:
        fail(path, `unsupported type ${typeof v}`);
    }
    // cast: typeof v is 'object' here (every other type returned or failed above) and null returned first
    const obj = v as object;
    if (depth >= limits.maxDepth) fail(path, `nesting deeper than ${limits.maxDepth}`);
    if (seen.has(obj)) fail(path, 'cycle');
    seen.add(obj);
    if (Array.isArray(obj)) {
      emit('[');
      for (let i = 0; i < obj.length; i++) {
        if (i > 0) emit(',');
        walk(obj[i], `${path}[${i}]`, depth + 1);
      }
      emit(']');
    } else {
      const proto = Object.getPrototypeOf(obj);
      if (proto !== Object.prototype && proto !== null) fail(path, 'only plain objects are allowed');
      // cast: a plain object (prototype checked just above): reading its own keys
      const rec = obj as Record<string, unknown>;
      const keys = Object.keys(rec).sort();
      emit('{');
      let first = true;
      for (const k of keys) {
        const child = rec[k];
        if (child === undefined) continue; // absent and undefined are the same optional field
        if (!k.isWellFormed()) fail(path, 'key contains a lone surrogate');
        if (!first) emit(',');
        first = false;
        emit(JSON.stringify(k));
        emit(':');
        walk(child, `${path}.${k}`, depth + 1);
      }
      emit('}');
    }
    seen.delete(obj);
  };

  walk(value, '$', 0);
  const text = out.join('');
  if (utf8Length(text) > limits.maxBytes) fail('$', `exceeds ${limits.maxBytes} bytes`);
  return text;
}

/** Canonical JSON of `value` as UTF-8 bytes (what Heddle hashes and signs). */
export function canonicalBytes(value: unknown, limits?: JsonLimits): Uint8Array {
  return new TextEncoder().encode(canonicalJson(value, limits));
}

function fail(path: string, why: string): never {
  throw new EnvelopeError('canonical_json', `cannot canonicalise ${path}: ${why}`, { field: path });
}
