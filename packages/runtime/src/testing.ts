// @heddle/runtime/testing: test tools for other packages' tests (never imported by production code).

export { fakeEnginePath } from './container/fixtures/fake-engine-path.js';
