// The duplicate rule of the namespace invariants on hand-made process tables (no root needed).
import { describe, expect, it } from 'vitest';
import { duplicates } from './invariants.js';
import { NET_FAULT_KINDS } from './kinds/index.js';
import { leadKind } from './net-trial.js';

describe('duplicates', () => {
  const orderOf = new Map([
    ['a1', 'o1'],
    ['a2', 'o1'],
    ['b1', 'o2'],
  ]);

  it('finds an order running as two instances on two hosts', () => {
    const copies = new Map([
      ['a1', [{ host: 0, pgid: 10 }]],
      ['a2', [{ host: 1, pgid: 20 }]],
      ['b1', [{ host: 0, pgid: 30 }]],
    ]);
    const d = duplicates(copies, orderOf);
    expect(d).toHaveLength(1);
    expect(d[0]).toContain('order o1 runs 2 times');
  });

  it('finds one instance running as two process groups', () => {
    const copies = new Map([
      [
        'b1',
        [
          { host: 0, pgid: 30 },
          { host: 0, pgid: 31 },
        ],
      ],
    ]);
    expect(duplicates(copies, orderOf)[0]).toContain('order o2 runs 2 times');
  });

  it('an instance the controller does not know counts as an order of its own', () => {
    const copies = new Map([
      [
        'zz',
        [
          { host: 2, pgid: 5 },
          { host: 3, pgid: 6 },
        ],
      ],
    ]);
    expect(duplicates(copies, orderOf)[0]).toContain('(instance zz)');
    expect(duplicates(new Map([['zz', [{ host: 2, pgid: 5 }]]]), orderOf)).toEqual([]);
  });

  it('one copy of each order is no duplicate', () => {
    const copies = new Map([
      ['a1', [{ host: 0, pgid: 10 }]],
      ['b1', [{ host: 1, pgid: 30 }]],
    ]);
    expect(duplicates(copies, orderOf)).toEqual([]);
  });
});

describe('lead kinds', () => {
  it('consecutive seeds lead with every kind in turn, and kind names are unique', () => {
    const n = NET_FAULT_KINDS.length;
    const led = Array.from({ length: n }, (_, i) => leadKind(2300 + i).name);
    expect(new Set(led).size).toBe(n);
    expect(new Set(NET_FAULT_KINDS.map((k) => k.name)).size).toBe(n);
    expect(leadKind(-3).name).toBe(leadKind(-3 + n).name);
  });
});
