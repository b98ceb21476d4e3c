export { isValidToken, loadToken, redact, removeToken, SEED_TOKEN_RE, saveToken } from './credentials.js';
export { SeedError, type SeedErrorCode } from './errors.js';
export {
  type PairSeedOptions,
  type PairSeedResult,
  pairSeed,
  type UnpairSeedResult,
  unpairSeed,
} from './pairing.js';
export { SEED_ARCH, SEED_RUNTIME_ID } from './seed-admission.js';
export type {
  CogConfig,
  CogLogs,
  CogManifest,
  ConsoleResult,
  InstalledCog,
  PairStatus,
  SeedApi,
  SeedIdentity,
  SeedStatus,
  StoreCog,
} from './seed-api.js';
export { SeedClient, type SeedClientOptions } from './seed-client.js';
export { SYNTHETIC_FEED_NOTE } from './seed-console.js';
export { SeedInstallUnsureError, SeedStrandedInstallError } from './seed-install.js';
export { SeedApiFailure } from './seed-instance.js';
export {
  parseSeedPins,
  readSeedPinsFile,
  SEED_PIN_LIMITS,
  SEED_REGISTRY,
  type SeedPin,
  SeedPinSchema,
  seedPinWorkload,
} from './seed-pins.js';
export { SEED_CONCURRENCY_CAP, SeedApiRuntime, type SeedApiRuntimeOptions } from './seed-runtime.js';
export { normalizeSpkiPin, spkiSha256, spkiSha256OfKey } from './spki.js';
