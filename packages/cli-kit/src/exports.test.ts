import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { typeExportNames } from '@heddle/envelope/testing';
import { describe, expect, it } from 'vitest';
import * as api from './index.js';
import * as testing from './testing.js';

describe('@heddle/cli-kit exports', () => {
  it('the value exports of the main entry change only on purpose: update this list when you mean to change the API', () => {
    expect(Object.keys(api).sort()).toEqual([
      'ARG_ERROR_REASONS',
      'ArgError',
      'COMPLETION_SHELLS',
      'CliError',
      'ExitCode',
      'Logger',
      'badInput',
      'commandHelp',
      'didYouMean',
      'dispatchCli',
      'errnoCode',
      'errorFields',
      'errorMessage',
      'exitQuietlyOnClosedPipe',
      'flagLabel',
      'inputOrSystemError',
      'keepRunningOnClosedPipe',
      'logTornTail',
      'parseArgv',
      'positional',
      'programHelp',
      'reportCliError',
      'requiredString',
      'runUntilSignal',
      'suggestions',
      'synopsis',
      'systemCliError',
      'toCliError',
      'usageError',
    ]);
  });

  it('the type exports of the main entry change only on purpose: update this list when you mean to change the API', () => {
    expect(typeExportNames(readFileSync(join(import.meta.dirname, 'index.ts'), 'utf8'))).toEqual([
      'ArgErrorReason',
      'CliErrorOptions',
      'CommandDef',
      'CompletionShell',
      'DispatchOptions',
      'ErrorSink',
      'FlagDef',
      'LineSink',
      'LogFields',
      'LogLevel',
      'ParsedArgs',
      'PositionalDef',
      'ProgramDef',
      'ReportOptions',
      'SystemErrorOptions',
      'TornTailNotice',
    ]);
  });

  it('the exports of ./testing change only on purpose: update this list when you mean to change the API', () => {
    expect(Object.keys(testing).sort()).toEqual([
      'killLogged',
      'modulesLoaded',
      'runCaptured',
      'spawnLogged',
      'tempDir',
      'waitForLog',
    ]);
    expect(typeExportNames(readFileSync(join(import.meta.dirname, 'testing.ts'), 'utf8'))).toEqual([
      'CapturingIo',
      'CliRun',
      'LoggedProcess',
      'ModulesLoaded',
    ]);
  });
});
