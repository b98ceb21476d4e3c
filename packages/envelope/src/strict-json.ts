import { EnvelopeError } from './errors.js';
import { DEFAULT_JSON_LIMITS, type JsonLimits, type JsonValue } from './json-limits.js';

/** Options of {@link parseJson}. */
export interface ParseJsonOptions extends Partial<JsonLimits> {
  /** Refuse fractions and exponents, and integers outside the safe range (default true). */
  readonly integersOnly?: boolean;
}

// Sticky, so it matches at `lastIndex` without copying the rest of the text (numbers of any length).
const NUMBER_RE = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;
const LITERALS: readonly (readonly [string, JsonValue])[] = [
  ['true', true],
  ['false', false],
  ['null', null],
];

/**
 * Parses JSON text strictly (RFC 8259 plus I-JSON): duplicate object keys, lone surrogates, depth and
 * size beyond the limits, and (by default) non-integer numbers are refused. Signed payloads are parsed
 * with this so that every verifier reads the same value out of the same bytes. Throws `EnvelopeError`
 * with code `invalid_json` and a message naming the offset and the JSON path.
 */
export function parseJson(text: string, options: ParseJsonOptions = {}): JsonValue {
  const maxDepth = options.maxDepth ?? DEFAULT_JSON_LIMITS.maxDepth;
  const maxBytes = options.maxBytes ?? DEFAULT_JSON_LIMITS.maxBytes;
  const integersOnly = options.integersOnly ?? true;
  if (typeof text !== 'string') throw new TypeError('parseJson expects a string');
  // Cheap bound first (a UTF-16 unit is at least one UTF-8 byte), then the exact one.
  if (text.length > maxBytes || Buffer.byteLength(text, 'utf8') > maxBytes) {
    throw new EnvelopeError('invalid_json', `JSON text exceeds ${maxBytes} bytes`, { field: '$' });
  }
  let i = 0;

  const fail = (why: string, path: string): never => {
    throw new EnvelopeError('invalid_json', `invalid JSON at offset ${i} (${path}): ${why}`, { field: path });
  };
  const ws = (): void => {
    for (;;) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else return;
    }
  };

  const str = (path: string): string => {
    // text[i] === '"'
    const start = i;
    i++;
    for (;;) {
      const c = text.charCodeAt(i);
      if (Number.isNaN(c)) fail('unterminated string', path);
      if (c === 0x22) break;
      if (c < 0x20) fail('control character in string', path);
      if (c === 0x5c) {
        const e = text[i + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) fail('bad \\u escape', path);
          i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else fail('bad escape', path);
      } else i++;
    }
    i++;
    const s = JSON.parse(text.slice(start, i)) as string;
    if (!s.isWellFormed()) fail('lone surrogate in string', path);
    return s;
  };

  const num = (path: string): number => {
    NUMBER_RE.lastIndex = i;
    const m = NUMBER_RE.exec(text);
    if (!m) return fail('bad number', path);
    if (integersOnly && (m[1] !== undefined || m[2] !== undefined)) fail('numbers must be integers', path);
    const n = Number(m[0]);
    if (integersOnly && !Number.isSafeInteger(n)) fail('integer outside the safe range', path);
    if (!Number.isFinite(n)) fail('number out of range', path);
    i += m[0].length;
    return n;
  };

  const value = (path: string, depth: number): JsonValue => {
    ws();
    const c = text[i];
    if (c === '{' || c === '[') {
      if (depth >= maxDepth) fail(`nesting deeper than ${maxDepth}`, path);
      i++;
      ws();
      if (c === '[') {
        const arr: JsonValue[] = [];
        if (text[i] === ']') {
          i++;
          return arr;
        }
        for (;;) {
          arr.push(value(`${path}[${arr.length}]`, depth + 1));
          ws();
          if (text[i] === ',') i++;
          else if (text[i] === ']') {
            i++;
            return arr;
          } else fail("expected ',' or ']'", path);
        }
      }
      const obj: Record<string, JsonValue> = Object.create(null);
      if (text[i] === '}') {
        i++;
        return { ...obj };
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail('expected a string key', path);
        const key = str(path);
        if (Object.hasOwn(obj, key)) fail(`duplicate key ${JSON.stringify(key)}`, path);
        ws();
        if (text[i] !== ':') fail("expected ':'", path);
        i++;
        obj[key] = value(`${path}.${key}`, depth + 1);
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === '}') {
          i++;
          return plain(obj);
        } else fail("expected ',' or '}'", path);
      }
    }
    if (c === '"') return str(path);
    for (const [word, literal] of LITERALS) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return literal;
      }
    }
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return num(path);
    return fail(
      c === undefined ? 'unexpected end of input' : `unexpected character ${JSON.stringify(c)}`,
      path,
    );
  };

  const result = value('$', 0);
  ws();
  if (i !== text.length) fail('trailing characters', '$');
  return result;
}

// Objects are built without a prototype (so "__proto__" is an ordinary key), then copied into a plain
// object with defineProperty so that key cannot reach Object.prototype.
function plain(obj: Record<string, JsonValue>): Record<string, JsonValue> {
  const out: Record<string, JsonValue> = {};
  for (const k of Object.keys(obj)) {
    Object.defineProperty(out, k, { value: obj[k], enumerable: true, writable: true, configurable: true });
  }
  return out;
}
