// The daemon helpers that need no daemon: which tunables the schemas in this tree accept, and the
// native process scan on a data directory without any.
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '@heddle/cli-kit/testing';
import { ControllerConfigFileSchema } from '@heddle/control-plane';
import { describe, expect, it } from 'vitest';
import { nativeCopies } from './converge.js';
import {
  killNativeProcesses,
  knownFields,
  nativeProcesses,
  workloadCopies,
  workloadProcesses,
} from './daemons.js';

describe('knownFields', () => {
  it('keeps the fields the schema declares, nested sections included, and drops the rest', () => {
    const got = knownFields(ControllerConfigFileSchema, {
      refresh_secs: 1,
      no_such_field: 2,
      lifecycle: { dead_after_secs: 8, no_such_timer: 1 },
    });
    expect(got.refresh_secs).toBe(1);
    expect(got).not.toHaveProperty('no_such_field');
    expect(got.lifecycle).toEqual({ dead_after_secs: 8 });
    const none = knownFields(ControllerConfigFileSchema, { lifecycle: { no_such_timer: 1 } });
    expect(none).toEqual({});
  });
});

describe('nativeProcesses', () => {
  it('finds the processes whose pid file names a running process, and skips dead and torn ones', () => {
    const data = tempDir('heddle-faults-native-');
    const put = (name: string, text: string): void => {
      mkdirSync(join(data, 'native', name), { recursive: true });
      writeFileSync(join(data, 'native', name, 'run.pid.json'), text);
    };
    put('me', JSON.stringify({ pid: process.pid, startTime: null, startedAtMs: 0 }));
    put('wrong-start', JSON.stringify({ pid: process.pid, startTime: '1', startedAtMs: 0 }));
    put('torn', '{"pid": 1');
    put('gone', JSON.stringify({ pid: 2 ** 22 + 7, startTime: null, startedAtMs: 0 }));
    expect(nativeProcesses(data).map((p) => p.pid)).toEqual([process.pid]);
    expect(nativeProcesses(join(data, 'nothing'))).toEqual([]);
    rmSync(data, { recursive: true, force: true });
  });
});

describe('workloadProcesses (the process table)', () => {
  it('finds every copy of a workload by its environment, pid file or not: one copy per process group', async () => {
    const data = tempDir('heddle-faults-proc-');
    const other = tempDir('heddle-faults-proc-other-');
    const start = (dir: string, id: string) =>
      spawn('sh', ['-c', 'sleep 30 & wait'], {
        detached: true,
        stdio: 'ignore',
        env: { ...process.env, HEDDLE_INSTANCE_ID: id, HEDDLE_DATA_DIR: join(dir, 'instances', id) },
      });
    // A host tricked into starting a second copy of one instance keeps no pid file for it.
    const copies = [start(data, 'cog-1'), start(data, 'cog-1'), start(other, 'cog-1')];
    try {
      await new Promise((r) => setTimeout(r, 300)); // the shells start their sleeps
      expect(nativeProcesses(data)).toEqual([]);
      const found = workloadProcesses(data);
      expect(new Set(found.map((p) => p.pgid))).toEqual(new Set([copies[0]?.pid, copies[1]?.pid]));
      expect(found.length).toBeGreaterThanOrEqual(4); // each shell and its sleep
      expect(workloadCopies(data).get('cog-1')?.sort()).toEqual([copies[0]?.pid, copies[1]?.pid].sort());
      expect(nativeCopies(data).filter((c) => c.instanceId === 'cog-1')).toHaveLength(2);
      // Another host's data directory is not mixed in.
      expect(workloadCopies(other).get('cog-1')).toEqual([copies[2]?.pid]);
      expect(killNativeProcesses(data)).toBeGreaterThanOrEqual(2);
      for (let i = 0; i < 40 && workloadProcesses(data).length > 0; i++)
        await new Promise((r) => setTimeout(r, 50));
      expect(workloadProcesses(data)).toEqual([]);
      expect(workloadProcesses(other)).not.toEqual([]);
    } finally {
      for (const c of copies)
        if (c.pid !== undefined)
          try {
            process.kill(-c.pid, 'SIGKILL');
          } catch {}
      rmSync(data, { recursive: true, force: true });
      rmSync(other, { recursive: true, force: true });
    }
  });
});
