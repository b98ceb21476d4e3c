import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as api from './index.js';

/** The value exports of the main entry, sorted. */
const VALUES: readonly string[] = [
  'COG_ID_RE',
  'COG_SOURCE_FILE',
  'CogBodySchema',
  'CogVersionSchema',
  'ContentStore',
  'DEFAULT_MAX_FILE_BYTES',
  'DEFAULT_MAX_TOTAL_BYTES',
  'DEFAULT_PIECE_SIZE',
  'DEFAULT_REORDER_BYTES',
  'ENVELOPE_FILE',
  'KindRegistry',
  'MAX_ENVELOPE_BYTES',
  'MAX_FILES',
  'MAX_GENERATION_STEP',
  'MAX_REVOCATION_GENERATION',
  'MIN_PIECE_SIZE',
  'NO_REVOCATIONS',
  'PACKAGE_SCHEMA',
  'PackageError',
  'PieceMapJsonSchema',
  'PieceVerifier',
  'REVOCATION_GENERATION_SCHEMA',
  'REVOCATION_LIST_SCHEMA',
  'RevocationHolder',
  'RevocationList',
  'RevocationListFileSchema',
  'TRUST_SCHEMA',
  'TrustAnchors',
  'VERSION_RE',
  'VerifiedPackageStore',
  'artifactId',
  'buildCogPackage',
  'cogKind',
  'cogSourceTemplate',
  'computeFilePieceMap',
  'computePieceMap',
  'defaultKindRegistry',
  'encodeEnvelope',
  'generationFileOf',
  'hashFile',
  'loadTrustFile',
  'manifestHashOf',
  'packageIdOf',
  'packagePathProblem',
  'parseCogSource',
  'parseEnvelope',
  'parsePieceMap',
  'parseStorePin',
  'parseStorePins',
  'parseTrust',
  'pieceLength',
  'pieceMapToJson',
  'readEnvelope',
  'readEnvelopeBytes',
  'readGenerationMark',
  'signEnvelope',
  'signPackage',
  'signRevocationEntry',
  'statementBytes',
  'storeEntryMatchesPin',
  'storePinRef',
  'validateCogConfig',
  'verifyPackage',
];

/** The names in the type-only export clauses (`export type { ... }`, `type X` inside `export { ... }`) of the main entry, sorted. */
const TYPES: readonly string[] = [
  'BuildOptions',
  'BuildResult',
  'CogBody',
  'CogConfigField',
  'CogConfigSchema',
  'CogConsoleCommand',
  'CogResources',
  'CogSource',
  'CogVariant',
  'ContentStoreOptions',
  'FileDigest',
  'KindDefinition',
  'ListUnavailableEntry',
  'LoadRevocationOptions',
  'ObtainedPackage',
  'PackageEnvelope',
  'PackageErrorCode',
  'PackageFetcher',
  'PackageFile',
  'PackageSignature',
  'ParsedPackage',
  'PieceExpectations',
  'PieceMap',
  'PieceMapJson',
  'PieceOutcome',
  'PieceReader',
  'PieceVerifierOptions',
  'ReadEnvelopeOptions',
  'RevocationEntry',
  'RevocationHolderOptions',
  'RevocationInput',
  'RevocationListFile',
  'SaveRevocationOptions',
  'SignListOptions',
  'SizeLimits',
  'StoreEntry',
  'StorePin',
  'TrustAnchor',
  'TrustFile',
  'TrustRole',
  'VerifiedFile',
  'VerifiedPackageStoreOptions',
  'VerifiedWorkload',
  'VerifyErrorCode',
  'VerifyOptions',
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

describe('@heddle/package main entry exports', () => {
  it('value exports change only on purpose: update this list when you mean to change the API', () => {
    expect(Object.keys(api).sort()).toEqual(VALUES);
  });

  it('type exports change only on purpose: update this list when you mean to change the API', () => {
    expect(typeExports(new URL('./index.ts', import.meta.url))).toEqual(TYPES);
  });
});
