// The `@heddle/seed-adapter/controller` entry: the Cognitum Seed's node driver for
// `@heddle/control-plane` (give `seedDriver()` to `ControlPlaneOptions.drivers`).

export { seedInstanceId, seedPlacement } from './controller/place-seed.js';
export {
  type AddSeedOptions,
  AddSeedOptionsSchema,
  addSeed,
  parseAddSeedOptions,
  SEED_NODE_KIND,
  SEED_TOKEN_REFUSED,
  seedFailure,
} from './controller/seed-book.js';
export { SeedDriver, seedDriver } from './controller/seed-driver.js';
export { seedChecks, seedContext } from './controller/seed-gate.js';
export {
  SEED_CAPABILITIES,
  seedDataDir,
  seedHandle,
  seedNodeId,
  seedPinOf,
  seedVariant,
} from './controller/seed-nodes.js';
export { SEED_INSTALL_WINDOW_MS } from './controller/seed-settle.js';
