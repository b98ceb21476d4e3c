// The `@heddle/control-plane/testing` entry: what tests of a control plane (this package's, and a
// node driver's in another package) are built with: fixed keys, an open gate policy, trust anchors,
// a real control plane (SQLite store, chain file, gate) in a temporary directory, and an assertion
// helper. Not for production use: the keys are fixed and public.

// A TCP proxy between a controller and PostgreSQL that a test cuts (drop or hang).
export { type CutProxy, startCutProxy } from './cut-proxy.js';
// A real `heddle-host` service on 127.0.0.1 for end-to-end tests of a plane (it needs the optional
// peer dependencies @heddle/host-service and @heddle/runtime).
export { examplePackage, startHost, type TestHost } from './test-fixtures.js';
// hello-cog as a native-only package (optionally failing at once), signed by the keys given.
export { nativePackage } from './test-native-package.js';
export {
  controllerKeys,
  OPEN_POLICY,
  type OpenPlaneOptions,
  openPlane,
  operatorKeys,
  planeError,
  publisherKeys,
  type TestPlane,
  tempDir,
  testAnchors,
} from './test-plane.js';
// A real PostgreSQL server from the machine's binaries (initdb into a temporary directory, run as an
// unprivileged user, a free 127.0.0.1 port).
export {
  findPostgresBin,
  postgresSkipReason,
  type StartPostgresOptions,
  startPostgres,
  type TestPostgres,
} from './test-postgres.js';
