export { canonicalPayload } from './canonical.js';
export { Chain } from './chain.js';
export type {
  AppendObservation,
  ChainOptions,
  ConsistencyProof,
  EventQuery,
  InclusionProof,
  OpenReport,
} from './chain-types.js';
export type { Checkpoint, CheckpointFields, SignedCheckpoint } from './checkpoint.js';
export { parseSignedCheckpoint, signCheckpoint, verifyCheckpoint } from './checkpoint.js';
export type { ChainRef, CrossRefFinding, CrossRefReport, NamedChain } from './cross-refs.js';
export { verifyCrossReferences } from './cross-refs.js';
export type { ChainErrorCode } from './errors.js';
export { ChainCorruptError, ChainError, CheckpointError } from './errors.js';
export type { ChainEvent } from './event.js';
export { computeEventHash, computePayloadHash, encodeEvent, eventHeaderText } from './event.js';
export type { TornTail } from './file-format.js';
export { CHAIN_FILE_HEADER } from './file-format.js';
export type { FileChainStoreOptions, FileStoreStats } from './file-store.js';
export { FileChainStore } from './file-store.js';
export { EVENT_HASH_TAG, GENESIS_PREV_HASH, isEventHash, PAYLOAD_HASH_TAG } from './hashing.js';
export {
  IDENTIFIER_PATTERN,
  isIdentifier,
  MAX_IDENTIFIER_LENGTH,
} from './identifiers.js';
export { EMPTY_MERKLE_ROOT, MerkleTree, merkleLeafHash, merkleNodeHash } from './merkle.js';
export type { HashLike } from './merkle-verify.js';
export { merkleRoot, verifyConsistency, verifyInclusion } from './merkle-verify.js';
export type { FileVerifyResult, OpenChainFileOptions, QuarantinedTail } from './open.js';
export { openChain, openChainFile, openMemoryChain, quarantinedTails, verifyChainFile } from './open.js';
export type { ChainStore, StoreContents } from './store.js';
export { MemoryChainStore } from './store.js';
export { verifyEvents } from './verify.js';
export type {
  CheckpointAnchor,
  VerifyFailure,
  VerifyOptions,
  VerifyReason,
  VerifyResult,
} from './verify-types.js';
