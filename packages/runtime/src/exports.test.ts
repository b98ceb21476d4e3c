import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { typeExportNames } from '@heddle/envelope/testing';
import { describe, expect, it } from 'vitest';
import * as api from './index.js';
import * as testing from './testing.js';

describe('@heddle/runtime exports (changes only on purpose: update this list when you mean to change the API)', () => {
  it('exports these values', () => {
    expect(Object.keys(api).sort()).toEqual([
      'ContainerRuntime',
      'NativeRuntime',
      'RERUN_PHASE',
      'RUNTIME_CHAIN_SOURCE',
      'RUN_EXIT_KIND',
      'RuntimeError',
      'WasiRuntime',
      'WorkloadHost',
      'checkRunMode',
      'hostCogArch',
      'probeSystem',
      'processStartTime',
      'workloadFromPackage',
      'workloadFromStorePin',
    ]);
  });

  it('exports these types', () => {
    expect(typeExportNames(readFileSync(new URL('./index.ts', import.meta.url), 'utf8'))).toEqual([
      'Admission',
      'ContainerRuntimeOptions',
      'ControlMode',
      'HostContract',
      'HostGate',
      'HostRecorder',
      'HostedInstance',
      'InstanceHandle',
      'InstanceState',
      'InstanceStatus',
      'LinkSecurity',
      'LoadedInstance',
      'NativeRuntimeOptions',
      'Preemption',
      'RunEvidence',
      'RunHooks',
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
    expect(typeExportNames(readFileSync(new URL('./testing.ts', import.meta.url), 'utf8'))).toEqual([]);
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
