import { utf8Length } from './bytes.js';
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
  if (text.length > maxBytes || utf8Length(text) > maxBytes) {
    throw new EnvelopeError('invalid_json', `JSON text exceeds ${maxBytes} bytes`, { field: '$' });
  }
  let i = 0;
  // The path of the value being read, as a stack of keys and indices; it is only turned into text
  // ("$.a.b[2]") when something is refused, so accepted input pays nothing for it.
  const trail: (string | number)[] = [];

  const fail = (why: string): never => {
    const path = pathOf(trail);
    throw new EnvelopeError('invalid_json', `invalid JSON at offset ${i} (${path}): ${why}`, { field: path });
  };
  const ws = (): void => {
    for (;;) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else return;
    }
  };

  const str = (): string => {
    // text[i] === '"'
    const start = i;
    i++;
    let escaped = false;
    let surrogate = false;
    for (;;) {
      const c = text.charCodeAt(i);
      if (Number.isNaN(c)) fail('unterminated string');
      if (c === 0x22) break;
      if (c < 0x20) fail('control character in string');
      if (c === 0x5c) {
        escaped = true;
        const e = text[i + 1];
        if (e === 'u') {
          if (!HEX4_RE.test(text.slice(i + 2, i + 6))) fail('bad \\u escape');
          i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else fail('bad escape');
      } else {
        if (c >= 0xd800 && c <= 0xdfff) surrogate = true;
        i++;
      }
    }
    i++;
    // Without escapes the text between the quotes is the string itself; with them, the engine decodes.
    // cast: the slice is a JSON string literal the scanner just checked, so JSON.parse returns a string
    const s = escaped ? (JSON.parse(text.slice(start, i)) as string) : text.slice(start + 1, i - 1);
    if ((escaped || surrogate) && !s.isWellFormed()) fail('lone surrogate in string');
    return s;
  };

  const num = (): number => {
    NUMBER_RE.lastIndex = i;
    const m = NUMBER_RE.exec(text);
    if (!m) return fail('bad number');
    if (integersOnly && (m[1] !== undefined || m[2] !== undefined)) fail('numbers must be integers');
    const n = Number(m[0]);
    if (integersOnly && !Number.isSafeInteger(n)) fail('integer outside the safe range');
    if (!Number.isFinite(n)) fail('number out of range');
    i += m[0].length;
    return n;
  };

  const value = (depth: number): JsonValue => {
    ws();
    const c = text[i];
    if (c === '{' || c === '[') {
      if (depth >= maxDepth) fail(`nesting deeper than ${maxDepth}`);
      i++;
      ws();
      if (c === '[') {
        const arr: JsonValue[] = [];
        if (text[i] === ']') {
          i++;
          return arr;
        }
        for (;;) {
          trail.push(arr.length);
          arr.push(value(depth + 1));
          trail.pop();
          ws();
          if (text[i] === ',') i++;
          else if (text[i] === ']') {
            i++;
            return arr;
          } else fail("expected ',' or ']'");
        }
      }
      const obj: Record<string, JsonValue> = {};
      if (text[i] === '}') {
        i++;
        return obj;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail('expected a string key');
        const key = str();
        if (Object.hasOwn(obj, key)) fail(`duplicate key ${JSON.stringify(key)}`);
        ws();
        if (text[i] !== ':') fail("expected ':'");
        i++;
        trail.push(key);
        const child = value(depth + 1);
        trail.pop();
        setOwn(obj, key, child);
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === '}') {
          i++;
          return obj;
        } else fail("expected ',' or '}'");
      }
    }
    if (c === '"') return str();
    for (const [word, literal] of LITERALS) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return literal;
      }
    }
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return num();
    return fail(c === undefined ? 'unexpected end of input' : `unexpected character ${JSON.stringify(c)}`);
  };

  const result = value(0);
  ws();
  if (i !== text.length) fail('trailing characters');
  return result;
}

const HEX4_RE = /^[0-9a-fA-F]{4}$/;

/** The JSON path of a trail of keys and indices: `$`, `$.a`, `$.a.b[2]`. */
function pathOf(trail: readonly (string | number)[]): string {
  let path = '$';
  for (const step of trail) path += typeof step === 'number' ? `[${step}]` : `.${step}`;
  return path;
}

// Objects are plain objects built in place. Only "__proto__" would reach Object.prototype's accessor
// by assignment; it is defined as an ordinary own property instead, so it cannot set the prototype.
function setOwn(obj: Record<string, JsonValue>, key: string, value: JsonValue): void {
  if (key === '__proto__') {
    Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    obj[key] = value;
  }
}
