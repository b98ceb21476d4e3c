import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as api from './browser.js';

/** The value exports of the ./browser entry, sorted. */
const VALUES: readonly string[] = [
  'DEFAULT_JSON_LIMITS',
  'DomainTag',
  'EnvelopeError',
  'GROUP_ORDER',
  'HeddleError',
  'NODE_ID_HEX_LENGTH',
  'blake3',
  'blake3Hex',
  'canonicalBytes',
  'canonicalJson',
  'concatBytes',
  'domainMessage',
  'equalBytes',
  'fromHex',
  'fromUtf8',
  'generateKeyPair',
  'isBytes',
  'isCanonicalPointEncoding',
  'isCanonicalScalar',
  'isHex',
  'isSmallOrderEncoding',
  'nobleBackend',
  'nodeIdFromPublicKey',
  'parseJson',
  'publicKeyFromSecret',
  'sha256',
  'sha256Hex',
  'sign',
  'signWithDomain',
  'toHex',
  'utf8',
  'utf8Length',
  'verify',
  'verifyWithDomain',
];

/** The names in the type-only export clauses (`export type { ... }`, `type X` inside `export { ... }`) of the ./browser entry, sorted. */
const TYPES: readonly string[] = [
  'DomainTagValue',
  'Ed25519Backend',
  'JsonLimits',
  'JsonValue',
  'KeyPair',
  'ParseJsonOptions',
];

/** The type-only export names written in `file`, sorted. */
function typeExports(file: URL): string[] {
  const names: string[] = [];
  for (const m of readFileSync(file, 'utf8').matchAll(/export\s+(type\s+)?\{([^}]*)\}/g)) {
    for (const raw of (m[2] ?? '').split(',')) {
      const part = raw.trim();
      if (part === '') continue;
      if (m[1] !== undefined)
        names.push(
          part
            .split(/\s+as\s+/)
            .pop()
            ?.trim() ?? part,
        );
      else if (part.startsWith('type '))
        names.push(
          part
            .slice(5)
            .split(/\s+as\s+/)
            .pop()
            ?.trim() ?? part,
        );
    }
  }
  return names.sort();
}

describe('@heddle/envelope ./browser entry exports', () => {
  it('value exports change only on purpose: update this list when you mean to change the API', () => {
    expect(Object.keys(api).sort()).toEqual(VALUES);
  });

  it('type exports change only on purpose: update this list when you mean to change the API', () => {
    expect(typeExports(new URL('./browser.ts', import.meta.url))).toEqual(TYPES);
  });
});
