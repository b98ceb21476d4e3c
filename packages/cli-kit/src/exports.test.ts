import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { typeExportNames } from '@heddle/envelope/testing';
import { describe, expect, it } from 'vitest';
import * as api from './index.js';
import * as metrics from './metrics.js';
import * as testing from './testing.js';

describe('@heddle/cli-kit exports', () => {
  it('the value exports of the main entry change only on purpose: update this list when you mean to change the API', () => {
    expect(Object.keys(api).sort()).toEqual([
      'ARG_ERROR_REASONS',
      'ArgError',
      'COMPLETION_SHELLS',
      'CliError',
      'DEFAULT_LOG_LEVEL',
      'ExitCode',
      'LOG_LEVELS',
      'LOG_LEVEL_FLAG',
      'Logger',
      'badInput',
      'chooseLogLevel',
      'commandHelp',
      'didYouMean',
      'dispatchCli',
      'errnoCode',
      'errorFields',
      'errorMessage',
      'exitQuietlyOnClosedPipe',
      'flagLabel',
      'inputOrSystemError',
      'isLogLevel',
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
      'parseExposition',
      'runCaptured',
      'sampleValue',
      'spawnLogged',
      'tempDir',
      'waitForLog',
    ]);
    expect(typeExportNames(readFileSync(join(import.meta.dirname, 'testing.ts'), 'utf8'))).toEqual([
      'CapturingIo',
      'CliRun',
      'LoggedProcess',
      'ModulesLoaded',
      'ParsedExposition',
      'ParsedSample',
    ]);
  });

  it('the exports of ./metrics change only on purpose: update this list when you mean to change the API', () => {
    expect(Object.keys(metrics).sort()).toEqual([
      'Counter',
      'EXPOSITION_CONTENT_TYPE',
      'HEALTH_PATHS',
      'Histogram',
      'LATENCY_BUCKETS',
      'MetricsError',
      'MetricsRegistry',
      'MetricsServer',
      'escapeLabelValue',
      'formatValue',
      'healthAnswer',
      'registerDaemonMetrics',
      'registerProcessMetrics',
      'renderExposition',
    ]);
    expect(typeExportNames(readFileSync(join(import.meta.dirname, 'metrics.ts'), 'utf8'))).toEqual([
      'CollectedCounterDef',
      'CollectedGaugeDef',
      'DaemonMetricSources',
      'ExpositionFamily',
      'ExpositionSample',
      'HealthAnswer',
      'HistogramDef',
      'MetricDef',
      'MetricLabels',
      'MetricSample',
      'MetricsServerOptions',
      'ObservedChain',
      'ReadinessChecks',
    ]);
  });
});
