import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as browser from './browser.js';
import * as errors from './errors.js';
import { typeExportNames } from './export-names.js';
import * as api from './index.js';
import * as testing from './testing.js';

/** The value exports of the main entry, sorted. */
const VALUES: readonly string[] = [
  'BLAKE3_BACKEND_ENV',
  'DEFAULT_JSON_LIMITS',
  'DomainTag',
  'EnvelopeError',
  'GROUP_ORDER',
  'HEX128_RE',
  'HEX32_RE',
  'HEX64_RE',
  'HeddleError',
  'NODE_ID_HEX_LENGTH',
  'VERIFY_KEY_CACHE_DEFAULT',
  'VERIFY_KEY_CACHE_MAX',
  'blake3',
  'blake3Backend',
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
  'growVerifyKeyCache',
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
  'verifyKeyCacheCapacity',
  'verifyWithDomain',
  'writeFileAtomic',
  'zodIssues',
];

/** The names in the type-only export clauses of the main entry, sorted. */
const TYPES: readonly string[] = [
  'AtomicWriteOptions',
  'Blake3Backend',
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

describe('@heddle/envelope main entry exports', () => {
  it('value exports change only on purpose: update this list when you mean to change the API', () => {
    expect(Object.keys(api).sort()).toEqual(VALUES);
  });

  it('type exports change only on purpose: update this list when you mean to change the API', () => {
    expect(typeExportNames(readFileSync(new URL('./index.ts', import.meta.url), 'utf8'))).toEqual(TYPES);
  });
});

describe('@heddle/envelope ./browser entry exports', () => {
  it('value exports change only on purpose: update this list when you mean to change the API', () => {
    expect(Object.keys(browser).sort()).toEqual(BROWSER_VALUES);
  });

  it('type exports change only on purpose: update this list when you mean to change the API', () => {
    expect(typeExportNames(readFileSync(new URL('./browser.ts', import.meta.url), 'utf8'))).toEqual(
      BROWSER_TYPES,
    );
  });
});

describe('@heddle/envelope ./errors entry exports', () => {
  it('value exports change only on purpose: update this list when you mean to change the API', () => {
    expect(Object.keys(errors).sort()).toEqual(ERRORS_VALUES);
  });

  it('declares its exports in place (no re-export clauses): update this list when you mean to change the API', () => {
    expect(typeExportNames(readFileSync(new URL('./errors.ts', import.meta.url), 'utf8'))).toEqual([]);
  });
});

describe('@heddle/envelope ./testing entry exports', () => {
  it('value exports change only on purpose: update this list when you mean to change the API', () => {
    expect(Object.keys(testing).sort()).toEqual(['typeExportNames']);
  });

  it('type exports change only on purpose: update this list when you mean to change the API', () => {
    expect(typeExportNames(readFileSync(new URL('./testing.ts', import.meta.url), 'utf8'))).toEqual([]);
  });
});
