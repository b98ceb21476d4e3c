import { describe, expect, it } from 'vitest';
import { RuntimeError } from '../errors.js';
import { checkRunMode } from '../workload.js';
import { NATIVE_PATH, nativeConfigArgs, nativeEnvironment, nativeModeArgs } from './native-argv.js';
import { resolveRunUser } from './native-user.js';

describe('native argv and environment', () => {
  it('builds sorted --field value pairs without any quoting', () => {
    expect(nativeConfigArgs({ b: true, a: 'x y', c: 3 })).toEqual(['--a', 'x y', '--b', 'true', '--c', '3']);
    expect(() => nativeConfigArgs({ a: 'x\0y' })).toThrow(RuntimeError);
    expect(() => nativeConfigArgs({ a: 1.5 })).toThrow(/config.a/);
  });

  it('maps run modes to the cog convention', () => {
    expect(nativeModeArgs({ type: 'once' })).toEqual(['--once']);
    expect(nativeModeArgs({ type: 'interval', secs: 30 })).toEqual(['--interval', '30']);
    expect(nativeModeArgs({ type: 'listener' })).toEqual([]);
    expect(() => checkRunMode({ type: 'interval', secs: 1.5 })).toThrow(/runMode.secs/);
  });

  it('gives only the contract and a fixed PATH', () => {
    expect(
      nativeEnvironment({ nodeId: 'n', dataDir: '/d', sensorFeedPort: 5005, ingestToken: 't' }, 'i'),
    ).toEqual({
      PATH: NATIVE_PATH,
      HEDDLE_NODE_ID: 'n',
      HEDDLE_DATA_DIR: '/d',
      HEDDLE_INSTANCE_ID: 'i',
      HEDDLE_SENSOR_FEED_PORT: '5005',
      HEDDLE_INGEST_TOKEN: 't',
    });
  });

  it('resolves run users and refuses root and unknown users', () => {
    if (process.platform === 'linux') expect(resolveRunUser('nobody').uid).toBe(65534);
    expect(() => resolveRunUser('root')).toThrow(/root/);
    expect(() => resolveRunUser('no-such-user-xyz')).toThrow(/no such user/);
  });
});
