import { canTransition } from '@heddle/model';
import { isListing, ProtocolError, parseAnswer } from '@heddle/protocol';
import { describe, expect, it } from 'vitest';
import { planeConfig } from './config.js';
import { lifeOf, listingOf } from './host-listing.js';
import { canReach, pathTo } from './placement-life.js';
import { backoffMs } from './reschedule.js';
import { PLACEMENT_STATES } from './state-store.js';

describe('pathTo', () => {
  it('finds the shortest legal path through controller states, every step a lifecycle transition', () => {
    expect(pathTo('placed', 'running')).toEqual(['running']);
    expect(pathTo('placed', 'stopped')).toEqual(['loaded', 'stopped']);
    expect(pathTo('stopped', 'finished')).toEqual(['running', 'finished']);
    expect(pathTo('running', 'running')).toEqual([]);
    for (const from of PLACEMENT_STATES) {
      for (const to of PLACEMENT_STATES) {
        const path = pathTo(from, to);
        if (path === undefined) continue;
        let at = from;
        for (const s of path) {
          expect(canTransition(at, s)).toBe(true);
          at = s;
        }
        expect(at).toBe(to);
      }
    }
  });

  it('never leaves a final or replaced state, and never passes through a gone state', () => {
    expect(pathTo('unloaded', 'running')).toBeUndefined();
    expect(pathTo('rescheduled', 'running')).toBeUndefined();
    expect(pathTo('rescheduled', 'unloaded')).toEqual(['unloaded']);
    expect(pathTo('lost', 'unhealthy')).toEqual(['running', 'unhealthy']);
    expect(canReach('revoked', 'running')).toBe(false);
  });
});

describe('host listings', () => {
  const C = 'c'.repeat(32);
  const H = 'ab'.repeat(32);
  const view = (patch: Record<string, unknown>): Record<string, unknown> => ({
    instance_id: 'hello-0123456789abcdef',
    workload: 'hello',
    version: '0.1.0',
    route: 'native',
    runtime: 'native',
    variant: 'x86_64-native',
    package_id: H,
    manifest_hash: H,
    mode: { type: 'once' },
    decision_id: 'd'.repeat(64),
    last_decision_id: 'd'.repeat(64),
    requester: C,
    placed_at_ms: 1,
    desired_running: true,
    life: 'running',
    lease_stopped: false,
    restarts: 0,
    adopted: false,
    state: 'running',
    status: { state: 'running' },
    ...patch,
  });

  it('reads the parsed listing: instances, departed, decisions in flight', () => {
    const answer = parseAnswer(
      'workload.status',
      {
        node: 'e'.repeat(32),
        instances: [
          view({
            instance_id: 'a-0123456789abcdef',
            state: 'exited',
            mode: { type: 'interval', secs: 5 },
            life: 'restarting',
            lease_stopped: true,
            restarts: 2,
            adopted: true,
          }),
          view({ instance_id: 'b-0123456789abcdef', decision_id: '', life: 'finished', state: 'exited' }),
        ],
        in_flight: [{ decision_id: 'f'.repeat(64), method: 'workload.place', since_ms: 3 }],
        departed: [{ instance_id: 'c-0123456789abcdef', reason: 'lost', at_ms: 1, decision_id: null }],
      },
      { include_departed: true },
    );
    if (!isListing(answer)) throw new Error('expected a listing');
    const listing = listingOf(answer);
    const [a, b] = listing.instances;
    expect(a).toMatchObject({
      life: 'restarting',
      lease_stopped: true,
      restarts: 2,
      adopted: true,
      requester: C,
    });
    expect(b?.decision_id).toBeNull();
    expect(lifeOf(a as NonNullable<typeof a>)).toBe('restarting');
    expect(lifeOf(b as NonNullable<typeof b>)).toBe('finished');
    expect(lifeOf({ life: null, state: 'exited', mode: 'interval' })).toBe('running');
    expect(lifeOf({ life: 'fetching', state: 'loaded', mode: 'once' })).toBeUndefined();
    expect(listing.departed).toEqual([{ instance_id: 'c-0123456789abcdef', reason: 'lost', at_ms: 1 }]);
    expect(listing.in_flight).toEqual(['f'.repeat(64)]);
  });

  it('refuses a listing that does not fit as a whole, naming the field (its instances would look lost)', () => {
    const field = (value: unknown): string | undefined => {
      try {
        parseAnswer('workload.status', value, {});
      } catch (err) {
        if (err instanceof ProtocolError && err.code === 'invalid_answer') return err.field;
        throw err;
      }
      return undefined;
    };
    const base = { node: 'e'.repeat(32), in_flight: [] };
    expect(field({ ...base, instances: [view({}), view({ instance_id: 7 })] })).toBe(
      'result.instances.1.instance_id',
    );
    expect(field({ ...base, instances: [view({ life: 'zombie' })] })).toBe('result.instances.0.life');
    expect(
      field({
        ...base,
        instances: [],
        departed: [{ instance_id: 'x-0123456789abcdef', reason: 'eaten', at_ms: 1, decision_id: null }],
      }),
    ).toBe('result.departed.0.reason');
    expect(field(null)).toBe('result');
  });
});

describe('backoffMs', () => {
  it('doubles from rescheduleBackoffMs up to rescheduleBackoffMaxMs', () => {
    const ctx = { config: planeConfig() };
    expect([1, 2, 3, 4, 5, 6, 7, 100].map((n) => backoffMs(ctx, n))).toEqual([
      10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000, 300_000,
    ]);
  });
});
