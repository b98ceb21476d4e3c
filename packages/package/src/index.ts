export type { BuildOptions, BuildResult } from './build.js';
export { buildCogPackage } from './build.js';
export type { CogBody, CogConsoleCommand, CogResources, CogVariant } from './cog.js';
export {
  COG_ID_RE,
  CogBodySchema,
  CogVersionSchema,
  cogKind,
  defaultKindRegistry,
  VERSION_RE,
} from './cog.js';
export type { CogConfigField, CogConfigSchema } from './cog-config.js';
export { validateCogConfig } from './cog-config.js';
export type { CogSource } from './cog-source.js';
export { COG_SOURCE_FILE, cogSourceTemplate, parseCogSource } from './cog-source.js';
export type { ContentStoreOptions, StoreEntry } from './content-store.js';
export { ContentStore } from './content-store.js';
export type { PackageErrorCode, VerifyErrorCode } from './errors.js';
export { PackageError } from './errors.js';
export type { FileDigest } from './file-hash.js';
export { hashFile } from './file-hash.js';
export type { PackageEnvelope, PackageFile, PackageSignature } from './format.js';
export { encodeEnvelope, manifestHashOf, packageIdOf, statementBytes } from './format.js';
export type { FileStamp } from './hash-cache.js';
export {
  DEFAULT_HASH_CACHE_FILES,
  HashedContentCache,
  pieceMapOfHandle,
  sharedHashCache,
  stampOf,
} from './hash-cache.js';
export type { KindDefinition } from './kind-registry.js';
export { KindRegistry } from './kind-registry.js';
export type { SizeLimits } from './limits.js';
export {
  DEFAULT_MAX_FILE_BYTES,
  DEFAULT_MAX_TOTAL_BYTES,
  ENVELOPE_FILE,
  MAX_ENVELOPE_BYTES,
  MAX_FILES,
  PACKAGE_SCHEMA,
} from './limits.js';
export type { ParsedPackage, ReadEnvelopeOptions } from './manifest.js';
export { parseEnvelope, readEnvelope, readEnvelopeBytes } from './manifest.js';
export type {
  FetchedPackage,
  ObtainedPackage,
  PackageFetcher,
  VerifiedPackageStoreOptions,
} from './package-store.js';
export { VerifiedPackageStore } from './package-store.js';
export { packagePathProblem } from './paths.js';
export type { PieceExpectations, PieceOutcome, PieceReader, PieceVerifierOptions } from './piece-verifier.js';
export { DEFAULT_REORDER_BYTES, PieceVerifier } from './piece-verifier.js';
export type { PieceMap, PieceMapJson } from './pieces.js';
export {
  artifactId,
  computeFilePieceMap,
  computePieceMap,
  DEFAULT_PIECE_SIZE,
  MIN_PIECE_SIZE,
  PieceMapJsonSchema,
  parsePieceMap,
  pieceLength,
  pieceMapToJson,
} from './pieces.js';
export type { RevocationEntry, RevocationInput } from './revocation.js';
export { NO_REVOCATIONS, signRevocationEntry } from './revocation.js';
export type { SaveRevocationOptions } from './revocation-generation.js';
export {
  generationFileOf,
  REVOCATION_GENERATION_SCHEMA,
  readGenerationMark,
} from './revocation-generation.js';
export type { RevocationHolderOptions } from './revocation-holder.js';
export { RevocationHolder } from './revocation-holder.js';
export type {
  ListUnavailableEntry,
  LoadRevocationOptions,
  RevocationListFile,
  SignListOptions,
} from './revocation-list.js';
export {
  MAX_GENERATION_STEP,
  MAX_REVOCATION_GENERATION,
  REVOCATION_LIST_SCHEMA,
  RevocationList,
  RevocationListFileSchema,
} from './revocation-list.js';
export { signEnvelope, signPackage } from './sign.js';
export type { StorePin } from './store-pin.js';
export { parseStorePin, parseStorePins, storeEntryMatchesPin, storePinRef } from './store-pin.js';
export type { TrustAnchor, TrustFile, TrustRole } from './trust.js';
export { loadTrustFile, parseTrust, TRUST_SCHEMA, TrustAnchors } from './trust.js';
export type { VerifiedFile, VerifiedWorkload, VerifyOptions } from './verify.js';
export { verifyPackage } from './verify.js';
