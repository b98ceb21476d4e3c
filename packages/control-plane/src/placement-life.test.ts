import { canTransition } from '@heddle/model';
import { describe, expect, it } from 'vitest';
import { planeConfig } from './config.js';
import { lifeOf, parseListing } from './host-listing.js';
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
  it('parses the issue 8 fields, and derives a state from an older host without life', () => {
    const r = parseListing({
      node: 'n',
      instances: [
        {
          instance_id: 'i-1',
          requester: 'c',
          state: 'exited',
          mode: { type: 'interval', secs: 5 },
          life: 'restarting',
          lease_stopped: true,
          restarts: 2,
          adopted: true,
        },
        { instance_id: 'i-2', state: 'exited', mode: { type: 'once' } },
      ],
      in_flight: [{ decision_id: 'd' }],
      departed: [
        { instance_id: 'i-3', reason: 'lost', at_ms: 1 },
        { instance_id: 'i-4', reason: 'eaten', at_ms: 1 },
      ],
    });
    if (!('listing' in r)) throw new Error(r.error);
    const [a, b] = r.listing.instances;
    expect(a).toMatchObject({
      life: 'restarting',
      lease_stopped: true,
      restarts: 2,
      adopted: true,
      requester: 'c',
    });
    expect(lifeOf(a as NonNullable<typeof a>)).toBe('restarting');
    expect(lifeOf(b as NonNullable<typeof b>)).toBe('finished');
    expect(lifeOf({ life: null, state: 'exited', mode: 'interval' })).toBe('running');
    expect(lifeOf({ life: 'fetching', state: 'loaded', mode: 'once' })).toBeUndefined();
    expect(r.listing.departed).toEqual([{ instance_id: 'i-3', reason: 'lost', at_ms: 1 }]);
    expect(r.listing.in_flight).toEqual(['d']);
  });

  it('refuses a listing that does not parse as a whole (its instances would look lost)', () => {
    expect(parseListing({ instances: [{ instance_id: 'i-1' }, { instance_id: 7 }] })).toEqual({
      error: expect.stringContaining('instances.1.instance_id'),
    });
    expect(parseListing({ instances: [{ instance_id: 'i', life: 'zombie' }] })).toHaveProperty('error');
    expect(parseListing(null)).toHaveProperty('error');
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
