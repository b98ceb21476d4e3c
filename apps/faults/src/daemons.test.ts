// The daemon helpers that need no daemon: which tunables the schemas in this tree accept, and the
// native process scan on a data directory without any.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '@heddle/cli-kit';
import { describe, expect, it } from 'vitest';
import { ControllerConfigFileSchema } from '../../controller/src/controller-config.js';
import { knownFields, nativeProcesses } from './daemons.js';

describe('knownFields', () => {
  it('keeps the fields the schema declares, nested sections included, and drops the rest', () => {
    const got = knownFields(ControllerConfigFileSchema, {
      refresh_secs: 1,
      no_such_field: 2,
      lifecycle: { dead_after_secs: 8, no_such_timer: 1 },
    });
    expect(got.refresh_secs).toBe(1);
    expect(got).not.toHaveProperty('no_such_field');
    if ('lifecycle' in ControllerConfigFileSchema.shape) {
      expect(got.lifecycle).toEqual({ dead_after_secs: 8 });
    } else {
      expect(got).not.toHaveProperty('lifecycle');
    }
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
