import type { DepartedInstance } from '@heddle/protocol';
import { describe, expect, it } from 'vitest';
import { DEPARTED_CAPACITY, DepartedLog } from './departed.js';

const entry = (i: number, reason: DepartedInstance['reason'] = 'unloaded'): DepartedInstance => ({
  instance_id: `cog-${i.toString(16).padStart(16, '0')}`,
  reason,
  at_ms: 1_000 + i,
  decision_id: i % 2 === 0 ? null : 'd'.repeat(64),
});

describe('DepartedLog', () => {
  it('starts empty', () => {
    const log = new DepartedLog();
    expect(log.list()).toEqual([]);
    expect(log.find(entry(0).instance_id)).toBeUndefined();
  });

  it('keeps the newest 256 by default, oldest first', () => {
    expect(DEPARTED_CAPACITY).toBe(256);
    const log = new DepartedLog();
    for (let i = 0; i < 300; i++) log.note(entry(i));
    const list = log.list();
    expect(list).toHaveLength(256);
    expect(list[0]).toEqual(entry(44));
    expect(list.at(-1)).toEqual(entry(299));
    expect(log.find(entry(43).instance_id)).toBeUndefined();
    expect(log.find(entry(44).instance_id)).toEqual(entry(44));
  });

  it('honours a smaller capacity', () => {
    const log = new DepartedLog(2);
    log.note(entry(1));
    log.note(entry(2));
    log.note(entry(3));
    expect(log.list().map((e) => e.at_ms)).toEqual([1002, 1003]);
  });

  it('noting an id again replaces its entry and moves it to the newest', () => {
    const log = new DepartedLog();
    log.note(entry(1));
    log.note(entry(2));
    log.note(entry(3));
    const again = { ...entry(1, 'revoked'), at_ms: 9_999 };
    log.note(again);
    expect(log.list()).toEqual([entry(2), entry(3), again]);
    expect(log.find(again.instance_id)).toEqual(again);
  });

  it('a re-noted id is not dropped before entries that are older than its new note', () => {
    const log = new DepartedLog(3);
    log.note(entry(1));
    log.note(entry(2));
    log.note(entry(3));
    log.note(entry(1));
    log.note(entry(4));
    expect(log.list().map((e) => e.instance_id)).toEqual(
      [entry(3), entry(1), entry(4)].map((e) => e.instance_id),
    );
  });

  it('forget removes an entry; forgetting an unknown id is a no-op', () => {
    const log = new DepartedLog();
    log.note(entry(1));
    log.note(entry(2));
    log.forget(entry(1).instance_id);
    log.forget('nobody-0000000000000000');
    expect(log.list()).toEqual([entry(2)]);
    expect(log.find(entry(1).instance_id)).toBeUndefined();
  });

  it('list returns a copy', () => {
    const log = new DepartedLog();
    log.note(entry(1));
    const list = log.list();
    list.pop();
    expect(log.list()).toHaveLength(1);
  });
});
