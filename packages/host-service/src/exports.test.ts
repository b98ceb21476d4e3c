// The public surface of @heddle/host-service: it changes only on purpose.
import { readFileSync } from 'node:fs';
import { typeExportNames } from '@heddle/envelope/testing';
import { describe, expect, it } from 'vitest';
import * as api from './index.js';

describe('@heddle/host-service exports', () => {
  it('value exports change only on purpose: update this list when you mean to change the API', () => {
    expect(Object.keys(api).sort()).toEqual([
      'CONFIG_LOG_LEVELS',
      'ControllerLease',
      'DEFAULT_FACTS_TTL_MS',
      'DEFAULT_REFUSALS_PER_WINDOW',
      'DEFAULT_REFUSAL_WINDOW_MS',
      'DEFAULT_SUPERVISOR_POLICY',
      'DEPARTED_CAPACITY',
      'HOST_CONFIG_SCHEMA',
      'HostConfigFileSchema',
      'HostService',
      'HostServiceError',
      'LogLevelConfigSchema',
      'MAX_EVIDENCE_CHARS',
      'MAX_LOG_BYTES',
      'MAX_NONCE_JOURNAL_BYTES',
      'MetricsListenSchema',
      'NodeFactsSource',
      'SUPERVISOR_BOUNDS',
      'Supervisor',
      'TCP_PROBE_TIMEOUT_MS',
      'readinessProbeFor',
      'tcpAccepts',
      'workloadHostAdvertisement',
    ]);
  });

  it('type exports change only on purpose: update this list when you mean to change the API', () => {
    expect(typeExportNames(readFileSync(new URL('./index.ts', import.meta.url), 'utf8'))).toEqual([
      'AdvertisementOptions',
      'HostCallContext',
      'HostCallEvent',
      'HostConfigFile',
      'HostServiceErrorCode',
      'HostServiceOptions',
      'MetricsListenConfig',
      'NodeFactsSourceOptions',
      'NonceJournalReport',
      'PlacedInstance',
      'ReadinessProbe',
      'RecoveryReport',
      'RefusalBudgetOptions',
      'Supervision',
      'SupervisorEvent',
      'SupervisorOptions',
      'SupervisorPolicy',
    ]);
  });
});
