import { describe, expect, it } from 'vitest';
import { InFlight } from './in-flight.js';

const D1 = '1'.repeat(64);
const D2 = '2'.repeat(64);

describe('InFlight', () => {
  it('starts empty', () => {
    const f = new InFlight();
    expect(f.size).toBe(0);
    expect(f.list()).toEqual([]);
    expect(f.has(D1)).toBe(false);
  });

  it('lists entered decisions oldest first with method and since_ms', () => {
    const f = new InFlight();
    f.enter(D1, 'workload.place', 100);
    f.enter(D2, 'workload.stop', 200);
    expect(f.size).toBe(2);
    expect(f.list()).toEqual([
      { decision_id: D1, method: 'workload.place', since_ms: 100 },
      { decision_id: D2, method: 'workload.stop', since_ms: 200 },
    ]);
    expect(f.has(D1)).toBe(true);
    expect(f.has(D2)).toBe(true);
  });

  it('done removes only its own entry and is idempotent', () => {
    const f = new InFlight();
    const done1 = f.enter(D1, 'workload.place', 1);
    f.enter(D2, 'workload.start', 2);
    done1();
    done1();
    expect(f.size).toBe(1);
    expect(f.has(D1)).toBe(false);
    expect(f.list().map((d) => d.decision_id)).toEqual([D2]);
  });

  it('a decision re-sent while in flight appears twice and stays until both are done', () => {
    const f = new InFlight();
    const a = f.enter(D1, 'workload.place', 1);
    const b = f.enter(D1, 'workload.place', 2);
    expect(f.size).toBe(2);
    expect(f.list().map((d) => d.since_ms)).toEqual([1, 2]);
    a();
    expect(f.has(D1)).toBe(true);
    expect(f.list()).toEqual([{ decision_id: D1, method: 'workload.place', since_ms: 2 }]);
    b();
    expect(f.has(D1)).toBe(false);
    expect(f.size).toBe(0);
  });

  it('list returns a snapshot', () => {
    const f = new InFlight();
    const done = f.enter(D1, 'workload.place', 1);
    const snap = f.list();
    done();
    expect(snap).toHaveLength(1);
    expect(f.list()).toEqual([]);
  });
});
