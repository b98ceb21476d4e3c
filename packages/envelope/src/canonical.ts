import { EnvelopeError } from './errors.js';
import { DEFAULT_JSON_LIMITS, type JsonLimits } from './json-limits.js';

/**
 * Serialises `value` as RFC 8785 (JCS) canonical JSON, restricted to integers: object keys sorted by
 * UTF-16 code units, no insignificant white space, strings escaped as ECMAScript `JSON.stringify`
 * does. Throws `EnvelopeError` with code `canonical_json` (naming the path) for floats, integers
 * outside the safe range, lone surrogates, `undefined`, functions, symbols, bigints, non-plain
 * objects, cycles, or when the depth or size bound is exceeded.
 */
export function canonicalJson(value: unknown, limits: JsonLimits = DEFAULT_JSON_LIMITS): string {
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
  if (Buffer.byteLength(text, 'utf8') > limits.maxBytes) fail('$', `exceeds ${limits.maxBytes} bytes`);
  return text;
}

/** Canonical JSON of `value` as UTF-8 bytes (what Heddle hashes and signs). */
export function canonicalBytes(value: unknown, limits?: JsonLimits): Uint8Array {
  return new TextEncoder().encode(canonicalJson(value, limits));
}

function fail(path: string, why: string): never {
  throw new EnvelopeError('canonical_json', `cannot canonicalise ${path}: ${why}`, { field: path });
}
