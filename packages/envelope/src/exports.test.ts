import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as browser from './browser.js';
import * as errors from './errors.js';
import * as api from './index.js';

/** The value exports of the main entry, sorted. */
const VALUES: readonly string[] = [
  'DEFAULT_JSON_LIMITS',
  'DomainTag',
  'EnvelopeError',
  'GROUP_ORDER',
  'HEX128_RE',
  'HEX32_RE',
  'HEX64_RE',
  'HeddleError',
  'NODE_ID_HEX_LENGTH',
  'blake3',
  'blake3Hex',
  'canonicalBytes',
  'canonicalJson',
  'concatBytes',
  'createBlake3',
  'domainMessage',
  'equalBytes',
  'errnoCode',
  'errorMessage',
  'firstZodIssue',
  'fromHex',
  'fromUtf8',
  'fsyncDir',
  'generateKeyPair',
  'getEd25519Backend',
  'isBytes',
  'isCanonicalPointEncoding',
  'isCanonicalScalar',
  'isHex',
  'isJsonObject',
  'isNodeId',
  'isSmallOrderEncoding',
  'keyPairFromSecret',
  'loadKeyFile',
  'makeDirs',
  'nobleBackend',
  'nodeBackend',
  'nodeIdFromPublicKey',
  'parseJson',
  'parsePublicKey',
  'publicKeyFromSecret',
  'publicKeyToPem',
  'readFileBounded',
  'readTextBounded',
  'saveKeyFile',
  'setEd25519Backend',
  'sha256',
  'sha256Hex',
  'sign',
  'signWithDomain',
  'toHex',
  'utf8',
  'utf8Length',
  'verify',
  'verifyWithDomain',
  'writeFileAtomic',
  'zodIssues',
];

/** The names in the type-only export clauses of the main entry, sorted. */
const TYPES: readonly string[] = [
  'AtomicWriteOptions',
  'Blake3Hasher',
  'DomainTagValue',
  'Ed25519Backend',
  'FieldIssue',
  'JsonLimits',
  'JsonObject',
  'JsonValue',
  'KeyPair',
  'ParseJsonOptions',
  'SaveKeyFileOptions',
];

/** The value exports of the ./browser entry, sorted. */
const BROWSER_VALUES: readonly string[] = [
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

/** The names in the type-only export clauses (and `type X` inside `export { ... }`) of the ./browser entry, sorted. */
const BROWSER_TYPES: readonly string[] = [
  'DomainTagValue',
  'Ed25519Backend',
  'JsonLimits',
  'JsonValue',
  'KeyPair',
  'ParseJsonOptions',
];

/** The value exports of the ./errors entry (what loads without crypto or zod), sorted. */
const ERRORS_VALUES: readonly string[] = ['EnvelopeError', 'HeddleError', 'errnoCode', 'errorMessage'];

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

describe('@heddle/envelope main entry exports', () => {
  it('value exports change only on purpose: update this list when you mean to change the API', () => {
    expect(Object.keys(api).sort()).toEqual(VALUES);
  });

  it('type exports change only on purpose: update this list when you mean to change the API', () => {
    expect(typeExports(new URL('./index.ts', import.meta.url))).toEqual(TYPES);
  });
});

describe('@heddle/envelope ./browser entry exports', () => {
  it('value exports change only on purpose: update this list when you mean to change the API', () => {
    expect(Object.keys(browser).sort()).toEqual(BROWSER_VALUES);
  });

  it('type exports change only on purpose: update this list when you mean to change the API', () => {
    expect(typeExports(new URL('./browser.ts', import.meta.url))).toEqual(BROWSER_TYPES);
  });
});

describe('@heddle/envelope ./errors entry exports', () => {
  it('value exports change only on purpose: update this list when you mean to change the API', () => {
    expect(Object.keys(errors).sort()).toEqual(ERRORS_VALUES);
  });

  it('declares its exports in place (no re-export clauses): update this list when you mean to change the API', () => {
    expect(typeExports(new URL('./errors.ts', import.meta.url))).toEqual([]);
  });
});
