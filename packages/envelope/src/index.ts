export type { AtomicWriteOptions } from './atomic-file.js';
export { fsyncDir, writeFileAtomic } from './atomic-file.js';
export type { Blake3Backend } from './blake3-native.js';
export { BLAKE3_BACKEND_ENV } from './blake3-native.js';
export { makeDirs, readFileBounded, readTextBounded } from './bounded-fs.js';
export {
  concatBytes,
  equalBytes,
  fromHex,
  fromUtf8,
  isBytes,
  isHex,
  toHex,
  utf8,
  utf8Length,
} from './bytes.js';
export { canonicalBytes, canonicalJson } from './canonical.js';
export type { Blake3Hasher } from './digest.js';
export { blake3, blake3Backend, blake3Hex, createBlake3, sha256, sha256Hex } from './digest.js';
export { signWithDomain, verifyWithDomain } from './domain.js';
export type { DomainTagValue } from './domain-tag.js';
export { DomainTag, domainMessage } from './domain-tag.js';
export type { Ed25519Backend } from './ed25519/backend.js';
export {
  growVerifyKeyCache,
  nodeBackend,
  VERIFY_KEY_CACHE_DEFAULT,
  VERIFY_KEY_CACHE_MAX,
  verifyKeyCacheCapacity,
} from './ed25519/native.js';
export { nobleBackend } from './ed25519/noble.js';
export { getEd25519Backend, publicKeyFromSecret, setEd25519Backend, sign, verify } from './ed25519/sign.js';
export {
  GROUP_ORDER,
  isCanonicalPointEncoding,
  isCanonicalScalar,
  isSmallOrderEncoding,
} from './ed25519/strict.js';
export { EnvelopeError, errnoCode, errorMessage, HeddleError } from './errors.js';
export type { JsonObject } from './formats.js';
export { HEX32_RE, HEX64_RE, HEX128_RE, isJsonObject } from './formats.js';
export type { JsonLimits, JsonValue } from './json-limits.js';
export { DEFAULT_JSON_LIMITS } from './json-limits.js';
export type { SaveKeyFileOptions } from './key-file.js';
export { loadKeyFile, saveKeyFile } from './key-file.js';
export type { KeyPair } from './keys.js';
export {
  generateKeyPair,
  isNodeId,
  keyPairFromSecret,
  nodeIdFromPublicKey,
  parsePublicKey,
  publicKeyToPem,
} from './keys.js';
export { NODE_ID_HEX_LENGTH } from './node-id-length.js';
export type { ParseJsonOptions } from './strict-json.js';
export { parseJson } from './strict-json.js';
export type { FieldIssue } from './zod-issues.js';
export { firstZodIssue, zodIssues } from './zod-issues.js';
