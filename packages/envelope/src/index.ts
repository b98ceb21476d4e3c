export * from './atomic-file.js';
export * from './bounded-fs.js';
export * from './bytes.js';
export * from './canonical.js';
export * from './digest.js';
export * from './domain.js';
export type { Ed25519Backend } from './ed25519/backend.js';
export { nodeBackend } from './ed25519/native.js';
export { nobleBackend } from './ed25519/noble.js';
export { getEd25519Backend, publicKeyFromSecret, setEd25519Backend, sign, verify } from './ed25519/sign.js';
export {
  GROUP_ORDER,
  isCanonicalPointEncoding,
  isCanonicalScalar,
  isSmallOrderEncoding,
} from './ed25519/strict.js';
export * from './errors.js';
export * from './formats.js';
export * from './json-limits.js';
export * from './key-file.js';
export * from './keys.js';
export * from './strict-json.js';
export * from './zod-issues.js';
