// The `@heddle/seed-adapter/simulator` entry: a Cognitum Seed on 127.0.0.1 that follows the Seed's
// public API documents, for tests and for trying `heddle-seed` without hardware, and the
// self-signed certificate it serves HTTPS with. Nothing here is for talking to a real Seed.

export { SeedSimulator } from './simulator/seed-simulator.js';
export {
  parseSimulatorArgs,
  type RunningSimulator,
  runSimulatorFromArgv,
  SIMULATOR_USAGE,
  type SimulatorArgs,
} from './simulator/sim-cli.js';
export {
  DEFAULT_CATALOG,
  type NoAnswerMode,
  type SeedSimulatorOptions,
  type SimInstalledCog,
  type SimRequest,
  storeCog,
} from './simulator/sim-types.js';
export { type SelfSignedCert, selfSignedCert, spkiOfPem } from './test-tls.js';
