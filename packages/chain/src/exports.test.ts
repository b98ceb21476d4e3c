import { readFileSync } from 'node:fs';
import { typeExportNames } from '@heddle/envelope/testing';
import { describe, expect, it } from 'vitest';
import * as api from './index.js';

/** The value exports of the main entry, sorted. */
const VALUES: readonly string[] = [
  'CHAIN_FILE_HEADER',
  'Chain',
  'ChainCorruptError',
  'ChainError',
  'CheckpointError',
  'EMPTY_MERKLE_ROOT',
  'EVENT_HASH_TAG',
  'FileChainStore',
  'GENESIS_PREV_HASH',
  'IDENTIFIER_PATTERN',
  'MAX_IDENTIFIER_LENGTH',
  'MemoryChainStore',
  'MerkleTree',
  'PAYLOAD_HASH_TAG',
  'canonicalPayload',
  'computeEventHash',
  'computePayloadHash',
  'encodeEvent',
  'eventHeaderText',
  'isEventHash',
  'isIdentifier',
  'merkleLeafHash',
  'merkleNodeHash',
  'merkleRoot',
  'openChain',
  'openChainFile',
  'openMemoryChain',
  'parseSignedCheckpoint',
  'quarantinedTails',
  'signCheckpoint',
  'verifyChainFile',
  'verifyCheckpoint',
  'verifyConsistency',
  'verifyCrossReferences',
  'verifyEvents',
  'verifyInclusion',
];

/** The names in the type-only export clauses (`export type { ... }`, `type X` inside `export { ... }`) of the main entry, sorted. */
const TYPES: readonly string[] = [
  'AppendObservation',
  'ChainErrorCode',
  'ChainEvent',
  'ChainOptions',
  'ChainRef',
  'ChainStore',
  'Checkpoint',
  'CheckpointAnchor',
  'CheckpointFields',
  'ConsistencyProof',
  'CrossRefFinding',
  'CrossRefReport',
  'EventQuery',
  'FileChainStoreOptions',
  'FileStoreStats',
  'FileVerifyResult',
  'HashLike',
  'InclusionProof',
  'NamedChain',
  'OpenChainFileOptions',
  'OpenReport',
  'QuarantinedTail',
  'SignedCheckpoint',
  'StoreContents',
  'TornTail',
  'VerifyFailure',
  'VerifyOptions',
  'VerifyReason',
  'VerifyResult',
];

describe('@heddle/chain main entry exports', () => {
  it('value exports change only on purpose: update this list when you mean to change the API', () => {
    expect(Object.keys(api).sort()).toEqual(VALUES);
  });

  it('type exports change only on purpose: update this list when you mean to change the API', () => {
    expect(typeExportNames(readFileSync(new URL('./index.ts', import.meta.url), 'utf8'))).toEqual(TYPES);
  });
});
