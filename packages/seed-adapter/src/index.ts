export * from './api-schemas.js';
export { type SeedCall, seedRequest } from './client-http.js';
export { checkApiPath, type HttpMethod, type SeedTarget, seedTarget } from './client-target.js';
export * from './credentials.js';
export * from './errors.js';
export * from './pairing.js';
export * from './seed-admission.js';
export * from './seed-api.js';
export * from './seed-client.js';
export * from './seed-console.js';
export * from './seed-evidence.js';
export * from './seed-install.js';
export * from './seed-instance.js';
export * from './seed-lifecycle.js';
export * from './seed-load.js';
export * from './seed-pins.js';
export * from './seed-runtime.js';
export * from './simulator/seed-simulator.js';
export * from './simulator/sim-cli.js';
export {
  DEFAULT_CATALOG,
  type NoAnswerMode,
  type SeedSimulatorOptions,
  type SimInstalledCog,
  type SimRequest,
  storeCog,
} from './simulator/sim-types.js';
export * from './spki.js';
export * from './test-tls.js';
