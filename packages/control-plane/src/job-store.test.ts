import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseJobSpec } from './job-file.js';
import { SqliteStateStore } from './sqlite-store.js';
import type { JobInstanceRecord, JobRecord, JobVersionRecord } from './state-store.js';
import { tempDir } from './test-plane.js';

const HASH = 'a'.repeat(64);

function version(job: string, n: number): JobVersionRecord {
  return {
    job,
    version: n,
    spec: parseJobSpec({ name: job, manifest_hash: HASH, count: n }),
    spec_hash: String(n % 10).repeat(64),
    manifest_hash: HASH,
    workload: 'hello-cog',
    workload_version: `1.0.${n}`,
    cause: n === 3 ? 'revert' : 'run',
    reverted_from: n === 3 ? 1 : null,
    actor: n === 1 ? 'alice' : null,
    created_at_ms: 1000 + n,
  };
}

const JOB: JobRecord = {
  name: 'web',
  version: 2,
  status: 'running',
  rollout: 'rolling',
  stable_version: 1,
  blocked: null,
  detail: null,
  created_at_ms: 1,
  updated_at_ms: 2,
};

function inst(id: string, job: string, at: number): JobInstanceRecord {
  return {
    instance_id: id,
    job,
    version: 1,
    node_id: 'n'.repeat(32),
    order_id: 'o-1',
    placed_at_ms: at,
    healthy_at_ms: null,
  };
}

describe('SqliteStateStore: jobs (schema v8)', () => {
  it('keeps jobs, their versions and instances across a reopen', () => {
    const path = join(tempDir(), 'state.db');
    const s = SqliteStateStore.open(path);
    s.putJob(JOB);
    for (const n of [2, 1, 3]) s.putJobVersion(version('web', n));
    s.putJobVersion(version('other', 1));
    s.putJobInstance(inst('i-b', 'web', 20));
    s.putJobInstance(inst('i-a', 'web', 10));
    s.putJobInstance(inst('i-c', 'other', 5));
    s.close();
    const r = SqliteStateStore.open(path);
    expect(r.getJob('web')).toEqual(JOB);
    expect(r.listJobs().map((j) => j.name)).toEqual(['web']);
    expect(r.listJobVersions('web').map((v) => v.version)).toEqual([1, 2, 3]);
    expect(r.getJobVersion('web', 3)).toEqual(version('web', 3));
    expect(r.getJobVersion('web', 4)).toBeUndefined();
    expect(r.listJobInstances('web').map((i) => i.instance_id)).toEqual(['i-a', 'i-b']);
    expect(r.listJobInstances().map((i) => i.instance_id)).toEqual(['i-c', 'i-a', 'i-b']);
    r.putJobInstance({ ...inst('i-a', 'web', 10), healthy_at_ms: 99 });
    expect(r.getJobInstance('i-a')?.healthy_at_ms).toBe(99);
    expect(r.removeJobInstance('i-a')).toBe(true);
    expect(r.removeJobInstance('i-a')).toBe(false);
    expect(r.removeJob('web')).toBe(true);
    expect(r.getJob('web')).toBeUndefined();
    r.close();
  });

  it('never rewrites a job version (StateError conflict), and the stored one stays', () => {
    const s = SqliteStateStore.open(':memory:');
    s.putJobVersion(version('web', 1));
    let err: unknown;
    try {
      s.putJobVersion({ ...version('web', 1), actor: 'mallory' });
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: 'conflict', field: 'job_versions.version' });
    expect(s.getJobVersion('web', 1)?.actor).toBe('alice');
    s.close();
  });

  it('refuses an invalid job row, naming the field', () => {
    const s = SqliteStateStore.open(':memory:');
    expect(() => s.putJob({ ...JOB, status: 'paused' as JobRecord['status'] })).toThrow(
      expect.objectContaining({ code: 'corrupt', field: 'jobs.status' }),
    );
    s.close();
  });
});
