import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as api from './index.js';
import * as testing from './testing.js';

/** The names in the `export type { ... }` clauses of an entry file, sorted. */
function typeExports(file: URL): string[] {
  const text = readFileSync(file, 'utf8');
  const names: string[] = [];
  for (const m of text.matchAll(/export type \{([^}]*)\}/g)) {
    for (const n of (m[1] ?? '').split(',')) if (n.trim() !== '') names.push(n.trim());
  }
  return names.sort();
}

describe('@heddle/runtime exports (changes only on purpose: update this list when you mean to change the API)', () => {
  it('exports these values', () => {
    expect(Object.keys(api).sort()).toEqual([
      'ContainerRuntime',
      'InstanceLife',
      'LIFECYCLE_HISTORY',
      'LIFECYCLE_STATES',
      'LIFECYCLE_TRANSITIONS',
      'LifecycleError',
      'MAX_INTERVAL_SECS',
      'NativeRuntime',
      'RERUN_PHASE',
      'RUNTIME_CHAIN_SOURCE',
      'RUN_EXIT_KIND',
      'RuntimeError',
      'STORE_PIN_RESOURCE_COST',
      'WasiRuntime',
      'WorkloadHost',
      'canTransition',
      'checkRunMode',
      'deriveInstanceId',
      'gateContextFor',
      'hostCogArch',
      'isGone',
      'lifecyclePayload',
      'probeSystem',
      'processStartTime',
      'workloadFromPackage',
      'workloadFromStorePin',
    ]);
  });

  it('exports these types', () => {
    expect(typeExports(new URL('./index.ts', import.meta.url))).toEqual([
      'Admission',
      'ContainerRuntimeOptions',
      'ControlMode',
      'HostContextFacts',
      'HostContract',
      'HostGate',
      'HostRecorder',
      'HostedInstance',
      'InstanceHandle',
      'InstanceState',
      'InstanceStatus',
      'LifecycleState',
      'LifecycleTransition',
      'LinkSecurity',
      'LoadedInstance',
      'NativeRuntimeOptions',
      'NetworkExposure',
      'Preemption',
      'RunEvidence',
      'RunHooks',
      'RunMode',
      'RuntimeErrorCode',
      'RuntimeWorkload',
      'SystemFacts',
      'WasiRuntimeOptions',
      'WorkloadConfig',
      'WorkloadHostOptions',
      'WorkloadRuntime',
      'WorkloadSource',
    ]);
  });
});

describe('@heddle/runtime/testing exports (changes only on purpose: update this list when you mean to change the API)', () => {
  it('exports these values', () => {
    expect(Object.keys(testing).sort()).toEqual(['fakeEnginePath']);
  });

  it('exports no types', () => {
    expect(typeExports(new URL('./testing.ts', import.meta.url))).toEqual([]);
  });

  it('fakeEnginePath names an executable fake engine that answers `version` as docker does', () => {
    const state = mkdtempSync(join(tmpdir(), 'heddle-fake-engine-'));
    const out = execFileSync(testing.fakeEnginePath(), ['version', '--format', '{{json .}}'], {
      env: { ...process.env, FAKE_ENGINE_STATE: state },
      encoding: 'utf8',
    });
    expect(JSON.parse(out)).toMatchObject({ Server: { Arch: 'amd64' } });
  });
});
