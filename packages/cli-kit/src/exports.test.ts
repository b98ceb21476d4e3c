import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as api from './index.js';
import * as testing from './testing.js';

/** The type-only names an entry file exports: `export type { A }` and `export { type B }`. */
function typeExports(file: string): string[] {
  const text = readFileSync(join(import.meta.dirname, file), 'utf8');
  const names: string[] = [];
  for (const m of text.matchAll(/export (type )?\{([^}]*)\}/g)) {
    for (const part of (m[2] ?? '').split(',').map((p) => p.trim())) {
      if (part === '') continue;
      if (m[1] !== undefined) names.push(part);
      else if (part.startsWith('type ')) names.push(part.slice(5));
    }
  }
  return names.sort();
}

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
    expect(typeExports('index.ts')).toEqual([
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
    expect(typeExports('testing.ts')).toEqual(['CapturingIo', 'CliRun', 'LoggedProcess', 'ModulesLoaded']);
  });
});
