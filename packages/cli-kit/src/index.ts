export { ARG_ERROR_REASONS, ArgError, type ArgErrorReason } from './arg-error.js';
export { badInput, CliError, type CliErrorOptions, ExitCode, usageError } from './cli-error.js';
export { exitQuietlyOnClosedPipe, keepRunningOnClosedPipe } from './closed-pipe.js';
export type { CommandDef, FlagDef, PositionalDef } from './command-def.js';
export { COMPLETION_SHELLS, type CompletionShell } from './completion.js';
export { runUntilSignal } from './daemon-signals.js';
export { type DispatchOptions, dispatchCli, type LineSink } from './dispatch.js';
export { errnoCode, errorMessage } from './error-text.js';
export { commandHelp, flagLabel, type ProgramDef, programHelp, synopsis } from './help.js';
export { chooseLogLevel, LOG_LEVEL_FLAG } from './log-level-flag.js';
export {
  DEFAULT_LOG_LEVEL,
  errorFields,
  isLogLevel,
  LOG_LEVELS,
  type LogFields,
  Logger,
  type LogLevel,
} from './logger.js';
export { type ParsedArgs, parseArgv, positional, requiredString } from './parse-args.js';
export { type ErrorSink, type ReportOptions, reportCliError, toCliError } from './report-error.js';
export { didYouMean, suggestions } from './suggest.js';
export { inputOrSystemError, type SystemErrorOptions, systemCliError } from './system-error.js';
export { logTornTail, type TornTailNotice } from './torn-tail-log.js';
