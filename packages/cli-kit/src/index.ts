export { badInput, CliError, type CliErrorOptions, ExitCode, usageError } from './cli-error.js';
export { type ErrorEmitter, exitQuietlyOnClosedPipe, keepRunningOnClosedPipe } from './closed-pipe.js';
export {
  COMPLETION_SHELLS,
  type CompletionCommand,
  type CompletionShell,
  completionScript,
} from './completion.js';
export { runUntilSignal } from './daemon-signals.js';
export {
  type CommandEntry,
  type DispatchOptions,
  dispatchCli,
  type LineSink,
  type SubcommandEntry,
} from './dispatch.js';
export {
  boolFlag,
  type FlagSpec,
  type FlagValues,
  flagOptions,
  type ParseArgsOptions,
  stringFlag,
  stringsFlag,
} from './flags.js';
export { killLogged, type LoggedProcess, spawnLogged, waitForLog } from './logged-process.js';
export { errorFields, type LogFields, Logger, type LogLevel } from './logger.js';
export { type ErrorSink, type ReportOptions, reportCliError, toCliError } from './report-error.js';
export { didYouMean, editDistance, suggestions } from './suggest.js';
export { inputOrSystemError, type SystemErrorOptions, systemCliError } from './system-error.js';
export { type CapturingIo, type CliRun, runCaptured, tempDir } from './testing.js';
export { logTornTail, type TornTailNotice } from './torn-tail-log.js';
