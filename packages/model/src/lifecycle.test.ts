import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  canTransition,
  InstanceLife,
  LIFECYCLE_HISTORY,
  LIFECYCLE_STATES,
  LIFECYCLE_TRANSITIONS,
  LifecycleError,
  type LifecycleState,
  lifecyclePayload,
} from './lifecycle.js';

describe('lifecycle transition table', () => {
  it('lists all sixteen states of the issue, each with its moves', () => {
    expect([...LIFECYCLE_STATES].sort()).toEqual(
      [
        'requested',
        'placed',
        'fetching',
        'verified',
        'loaded',
        'running',
        'unhealthy',
        'restarting',
        'stopping',
        'stopped',
        'finished',
        'failed',
        'lost',
        'rescheduled',
        'revoked',
        'unloaded',
      ].sort(),
    );
    for (const s of LIFECYCLE_STATES) {
      for (const t of LIFECYCLE_TRANSITIONS[s]) expect(LIFECYCLE_STATES).toContain(t);
    }
  });

  it('reaches every state from requested', () => {
    const seen = new Set<LifecycleState>(['requested']);
    const todo: LifecycleState[] = ['requested'];
    while (todo.length > 0) {
      for (const n of LIFECYCLE_TRANSITIONS[todo.pop() as LifecycleState]) {
        if (!seen.has(n)) {
          seen.add(n);
          todo.push(n);
        }
      }
    }
    expect(seen.size).toBe(LIFECYCLE_STATES.length);
  });

  it('makes unloaded final and lets a replaced or revoked instance only be unloaded', () => {
    expect(LIFECYCLE_TRANSITIONS.unloaded).toEqual([]);
    expect(LIFECYCLE_TRANSITIONS.rescheduled).toEqual(['unloaded']);
    expect(LIFECYCLE_TRANSITIONS.revoked).toEqual(['unloaded']);
    expect(canTransition('rescheduled', 'running')).toBe(false);
    expect(canTransition('lost', 'running')).toBe(true);
    expect(canTransition('fetching', 'running')).toBe(false);
  });
});

describe('InstanceLife', () => {
  it('records legal moves with their reason and time', () => {
    const life = new InstanceLife('i-1', 'placed', 1);
    expect(life.to('fetching', 'package asked', 2)).toEqual({
      instance_id: 'i-1',
      from: 'placed',
      to: 'fetching',
      reason: 'package asked',
      at_ms: 2,
    });
    life.to('verified', 'verified', 3);
    life.to('loaded', 'loaded', 4);
    life.to('running', 'started', 5);
    expect(life.state).toBe('running');
    expect(life.sinceMs).toBe(5);
    expect(life.history.map((t) => t.to)).toEqual(['fetching', 'verified', 'loaded', 'running']);
  });

  it('refuses an illegal move and keeps its state', () => {
    const life = new InstanceLife('i-2', 'unloaded', 1);
    expect(() => life.to('running', 'x', 2)).toThrow(LifecycleError);
    try {
      life.to('running', 'x', 2);
    } catch (err) {
      expect((err as LifecycleError).code).toBe('illegal_transition');
      expect((err as Error).message).toContain('unloaded -> running');
    }
    expect(life.state).toBe('unloaded');
    expect(life.history).toEqual([]);
  });

  it('returns undefined for a move to the state it is in', () => {
    const life = new InstanceLife('i-3', 'running', 1);
    expect(life.to('running', 'again', 2)).toBeUndefined();
    expect(life.sinceMs).toBe(1);
  });

  it('any sequence of moves: legal ones apply, illegal ones throw, history stays bounded', () => {
    const state = fc.constantFrom(...LIFECYCLE_STATES);
    fc.assert(
      fc.property(state, fc.array(state, { maxLength: 80 }), (start, moves) => {
        const life = new InstanceLife('i', start, 0);
        let expected = start;
        for (const [i, m] of moves.entries()) {
          if (m === expected) continue;
          if (canTransition(expected, m)) {
            life.to(m, 'p', i);
            expected = m;
          } else {
            expect(() => life.to(m, 'p', i)).toThrow(LifecycleError);
          }
          expect(life.state).toBe(expected);
        }
        expect(life.history.length).toBeLessThanOrEqual(LIFECYCLE_HISTORY);
        for (const t of life.history) expect(canTransition(t.from, t.to)).toBe(true);
      }),
    );
  });

  it('builds the chained payload with side and node', () => {
    const t = new InstanceLife('i-4', 'running', 0).to('lost', 'node dead', 9);
    expect(lifecyclePayload(t as NonNullable<typeof t>, 'controller', 'n-1', { order_id: 'o-1' })).toEqual({
      order_id: 'o-1',
      side: 'controller',
      node: 'n-1',
      instance_id: 'i-4',
      from: 'running',
      to: 'lost',
      reason: 'node dead',
    });
  });
});
