import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { InstanceLife } from '@heddle/model';
import { afterEach, describe, expect, it } from 'vitest';
import { newSupervision, type PlacedInstance } from './instance-record.js';
import { INSTANCES_FILE, InstanceStore, storedInstanceOf } from './instance-store.js';
import { tempDir } from './test-fixtures.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const fresh = (): string => {
  const d = tempDir('heddle-hs-store-');
  dirs.push(d);
  return d;
};

const ID = `hello-cog-${'0123456789abcdef'}`;

function placed(over: Partial<PlacedInstance> = {}): PlacedInstance {
  return {
    instanceId: ID,
    handle: { instanceId: ID, runtime: 'native', workloadId: 'hello-cog', version: '0.1.0' },
    route: 'native',
    host: undefined as unknown as PlacedInstance['host'],
    name: 'hello-cog',
    version: '0.1.0',
    variant: 'x86_64-native',
    packageId: 'a1'.repeat(32),
    manifestHash: 'b2'.repeat(32),
    mode: { type: 'interval', secs: 30 },
    values: { greeting: 'hi', interval_secs: 5, count: -3, on: true, none: null },
    decisionId: 'c3'.repeat(32),
    requester: 'd4'.repeat(16),
    placedAtMs: 1_700_000_000_000,
    desiredRunning: true,
    lastDecisionId: 'e5'.repeat(32),
    life: new InstanceLife(ID, 'running', 1),
    leaseStopped: false,
    supervision: newSupervision(),
    ...over,
  };
}

describe('InstanceStore', () => {
  it('round-trips every field a restarted host needs to adopt an instance, owner-only', () => {
    const dir = fresh();
    const store = new InstanceStore(dir);
    expect(store.load()).toEqual({ instances: [] });
    store.save([
      placed(),
      placed({
        instanceId: 'other-cog-0000000000000000',
        handle: { ...placed().handle, instanceId: 'other-cog-0000000000000000' },
        desiredRunning: false,
        leaseStopped: true,
        mode: { type: 'listener' },
      }),
    ]);
    expect(statSync(store.path).mode & 0o777).toBe(0o600);
    const back = store.load();
    expect(back.problem).toBeUndefined();
    expect(back.instances).toHaveLength(2);
    expect(back.instances[0]).toEqual(storedInstanceOf(placed()));
    expect(back.instances[0]).toMatchObject({
      instance_id: ID,
      handle: { instance_id: ID, runtime: 'native', workload_id: 'hello-cog', version: '0.1.0' },
      route: 'native',
      mode: { type: 'interval', secs: 30 },
      values: { greeting: 'hi', count: -3 },
      desired_running: true,
      lease_stopped: false,
      life: 'running',
    });
    expect(back.instances[1]).toMatchObject({
      desired_running: false,
      lease_stopped: true,
      mode: { type: 'listener' },
    });
    store.save([]);
    expect(store.load()).toEqual({ instances: [] });
  });

  it.each([
    ['not JSON', '{"schema":'],
    ['another schema', JSON.stringify({ schema: 'heddle.other.v1', version: 1, instances: [] })],
    ['a future version', JSON.stringify({ schema: 'heddle.host-instances.v1', version: 2, instances: [] })],
    [
      'a record with a bad field',
      JSON.stringify({ schema: 'heddle.host-instances.v1', version: 1, instances: [{ instance_id: 'x' }] }),
    ],
  ])('a file with %s is set aside as .bad-<ms> and the host starts empty', (_what, text) => {
    const dir = fresh();
    writeFileSync(join(dir, INSTANCES_FILE), text);
    const store = new InstanceStore(dir, () => 1234);
    const r = store.load();
    expect(r.instances).toEqual([]);
    expect(r.problem?.keptAs).toBe(join(dir, `${INSTANCES_FILE}.bad-1234`));
    expect(r.problem?.reason.length).toBeGreaterThan(10);
    expect(readFileSync(join(dir, `${INSTANCES_FILE}.bad-1234`), 'utf8')).toBe(text);
    expect(existsSync(store.path)).toBe(false);
    // The next start finds nothing (the bad file stays aside for the operator).
    expect(store.load()).toEqual({ instances: [] });
    expect(readdirSync(dir).filter((n) => n.includes('.bad-'))).toHaveLength(1);
  });

  it('a record whose handle names another instance is refused', () => {
    const dir = fresh();
    const store = new InstanceStore(dir, () => 9);
    store.save([placed({ handle: { ...placed().handle, instanceId: 'other-cog-0000000000000000' } })]);
    expect(store.load().problem?.reason).toContain('another instance');
  });
});
