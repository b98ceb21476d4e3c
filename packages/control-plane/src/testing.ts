// The `@heddle/control-plane/testing` entry: what tests of a control plane (this package's, and a
// node driver's in another package) are built with: fixed keys, an open gate policy, trust anchors,
// a real control plane (SQLite store, chain file, gate) in a temporary directory, and an assertion
// helper. Not for production use: the keys are fixed and public.

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
