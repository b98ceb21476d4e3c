import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  INSTANCE_FILE,
  type NativeInstanceRecord,
  PID_FILE,
  readInstanceRecord,
  readPidRecord,
  writeInstanceRecord,
  writePidRecord,
} from './native-instance-file.js';

const record: NativeInstanceRecord = {
  instanceId: 'i-1',
  workloadRef: 'cog:demo@1.0.0',
  workloadId: 'demo',
  version: '1.0.0',
  executable: '/state/i-1/bin/demo',
  configArgs: ['--rate', '5'],
  runMode: { type: 'interval', secs: 60 },
  host: { nodeId: 'node-1', dataDir: '/data/i-1', ingestToken: 'secret' },
  values: { rate: 5, tags: ['a'], deep: { on: true, none: null } },
};

function dir(): string {
  return mkdtempSync(join(tmpdir(), 'heddle-native-rec-'));
}

describe('native instance files (read back after a restart: checked, not trusted)', () => {
  it('reads back what it wrote', () => {
    const d = dir();
    writeInstanceRecord(d, record);
    expect(readInstanceRecord(d)).toEqual(record);
    writePidRecord(d, { pid: 4242, startTime: '123', startedAtMs: 1 });
    expect(readPidRecord(d)).toEqual({ pid: 4242, startTime: '123', startedAtMs: 1 });
  });

  it('refuses an instance record of another shape (undefined, not a half-read record)', () => {
    const d = dir();
    for (const bad of [
      { instanceId: 'i-1' },
      { ...record, configArgs: 'not-a-list' },
      { ...record, runMode: { type: 'sometimes' } },
      { ...record, host: { nodeId: 'node-1' } },
      { ...record, host: { ...record.host, sensorFeedPort: '5000' } },
      [record],
      null,
    ]) {
      writeFileSync(join(d, INSTANCE_FILE), JSON.stringify(bad));
      expect(readInstanceRecord(d)).toBeUndefined();
    }
  });

  it('refuses a pid file whose pid cannot lead a process group or whose fields are missing', () => {
    const d = dir();
    for (const bad of [{ pid: 1, startTime: null, startedAtMs: 0 }, { pid: 1.5 }, { pid: 77 }, 'x', null]) {
      writeFileSync(join(d, PID_FILE), JSON.stringify(bad));
      expect(readPidRecord(d)).toBeUndefined();
    }
  });

  it('never throws on junk files', () => {
    const d = dir();
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json()), (text) => {
        writeFileSync(join(d, INSTANCE_FILE), text);
        writeFileSync(join(d, PID_FILE), text);
        const r = readInstanceRecord(d);
        const p = readPidRecord(d);
        expect(r === undefined || typeof r.instanceId === 'string').toBe(true);
        expect(p === undefined || p.pid > 1).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
