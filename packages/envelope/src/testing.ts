// The `@heddle/envelope/testing` entry: tools the tests of every Heddle package share. Pure functions
// with no I/O; not for production use.

export { typeExportNames } from './export-names.js';
