export * from './build.js';
export * from './cog.js';
export * from './cog-config.js';
export * from './cog-source.js';
export * from './content-store.js';
export * from './errors.js';
export * from './file-hash.js';
export * from './format.js';
export * from './kind-registry.js';
export * from './limits.js';
export * from './manifest.js';
export * from './package-store.js';
export * from './paths.js';
export * from './piece-verifier.js';
export * from './pieces.js';
export * from './revocation.js';
export {
  generationFileOf,
  REVOCATION_GENERATION_SCHEMA,
  readGenerationMark,
  type SaveRevocationOptions,
} from './revocation-generation.js';
export * from './revocation-holder.js';
export * from './revocation-list.js';
export * from './sign.js';
export * from './store-pin.js';
export * from './trust.js';
export * from './verify.js';
