// `@heddle/envelope/browser`: the portable part of the package, for browsers, workers and edge
// runtimes. No `node:` import anywhere below this file, no WebAssembly, no work at import time:
// canonical JSON, the strict JSON parser, BLAKE3 and SHA-256, strict Ed25519 (the `noble` backend),
// domain-separated signatures, node ids and byte helpers. A bundling test keeps it that way.

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
export { DomainTag, type DomainTagValue, domainMessage } from './domain-tag.js';
export type { Ed25519Backend } from './ed25519/backend.js';
export { nobleBackend } from './ed25519/noble.js';
export {
  GROUP_ORDER,
  isCanonicalPointEncoding,
  isCanonicalScalar,
  isSmallOrderEncoding,
} from './ed25519/strict.js';
export { EnvelopeError, HeddleError } from './errors.js';
export { DEFAULT_JSON_LIMITS, type JsonLimits, type JsonValue } from './json-limits.js';
export type { KeyPair } from './keys.js';
export { NODE_ID_HEX_LENGTH } from './node-id-length.js';
export { blake3, blake3Hex, sha256, sha256Hex } from './portable/digest.js';
export {
  generateKeyPair,
  nodeIdFromPublicKey,
  publicKeyFromSecret,
  sign,
  signWithDomain,
  verify,
  verifyWithDomain,
} from './portable/ed25519.js';
export { type ParseJsonOptions, parseJson } from './strict-json.js';
