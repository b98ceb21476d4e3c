export { killLogged, type LoggedProcess, spawnLogged, waitForLog } from './logged-process.js';
export {
  type ParsedExposition,
  type ParsedSample,
  parseExposition,
  sampleValue,
} from './metrics/parse-exposition.js';
export { type ModulesLoaded, modulesLoaded } from './modules-loaded.js';
export { type CapturingIo, type CliRun, runCaptured, tempDir } from './run-captured.js';
