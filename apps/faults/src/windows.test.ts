import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '@heddle/cli-kit/testing';
import { describe, expect, it } from 'vitest';
import {
  chainEnd,
  chainSince,
  controllerRecordedPlace,
  decisions,
  hostFinishedPlace,
  watch,
  windowShortfalls,
} from './windows.js';

const rec = (hash: string, payload: Record<string, unknown>, kind = 'workload.place'): string =>
  `${JSON.stringify({ seq: 0, hash, source: 'x', kind, payload })}\n`;

describe('chainSince', () => {
  it('reads the records appended since an offset, leaving a torn last line for the next read', () => {
    const path = join(tempDir('heddle-faults-win-'), 'chain.jsonl');
    expect(chainEnd(path)).toBe(0);
    writeFileSync(path, rec('h0', { phase: 'decision' }));
    const from = chainEnd(path);
    appendFileSync(path, rec('h1', { phase: 'decision' }));
    appendFileSync(path, '{"seq":2,"hash":"h2","kind":"workload.pl');
    const a = chainSince(path, from);
    expect(a.records.map((r) => r.hash)).toEqual(['h1']);
    appendFileSync(path, `ace","payload":{"phase":"attempt","decision_id":"h1","outcome":"placed"}}\n`);
    const b = chainSince(path, a.offset);
    expect(b.records.map((r) => r.hash)).toEqual(['h2']);
    expect(chainSince(path, b.offset).records).toEqual([]);
  });
});

describe('window evidence', () => {
  it('tells a decision whose answer was recorded from one still out', () => {
    const records = chainSince(
      (() => {
        const p = join(tempDir('heddle-faults-win-'), 'c.jsonl');
        writeFileSync(
          p,
          rec('d1', { phase: 'decision' }) +
            rec('a1', { phase: 'attempt', decision_id: 'd1', outcome: 'indeterminate' }) +
            rec('d2', { phase: 'decision' }) +
            rec('a2', { phase: 'attempt', decision_id: 'd2', outcome: 'placed' }) +
            rec('r1', { phase: 'placed', decision_id: 'd3' }),
        );
        return p;
      })(),
      0,
    ).records;
    expect(decisions(records).map((r) => r.hash)).toEqual(['d1', 'd2']);
    expect(controllerRecordedPlace(records, 'd1')).toBe(false);
    expect(controllerRecordedPlace(records, 'd2')).toBe(true);
    expect(hostFinishedPlace(records, 'd3')).toBe(true);
    expect(hostFinishedPlace(records, 'd1')).toBe(false);
  });

  it('counts a place the host refused, or one the controller left unsettled, as over (not in the window)', () => {
    const p = join(tempDir('heddle-faults-win-'), 'c.jsonl');
    writeFileSync(
      p,
      rec(
        'f1',
        { phase: 'verify', code: 'runtime', method: 'workload.place', decision_id: 'd4' },
        'workload.refuse',
      ) +
        rec(
          'f2',
          { phase: 'verify', code: 'runtime', method: 'workload.stop', decision_id: 'd5' },
          'workload.refuse',
        ) +
        rec('u1', { phase: 'unsettled', decision_id: 'd6', node_id: 'n' }),
    );
    const records = chainSince(p, 0).records;
    expect(hostFinishedPlace(records, 'd4')).toBe(true);
    expect(hostFinishedPlace(records, 'd5')).toBe(false);
    expect(controllerRecordedPlace(records, 'd6')).toBe(true);
    expect(controllerRecordedPlace(records, 'd4')).toBe(false);
  });

  it('watch polls until a value or the deadline', async () => {
    let n = 0;
    expect(await watch(1_000, 1, () => (++n >= 3 ? n : undefined))).toBe(3);
    expect(await watch(20, 5, () => undefined)).toBeUndefined();
  });
});

describe('windowShortfalls', () => {
  it('fails a group where fewer than half of its trials landed; a lone trial and window-less trials are not judged', () => {
    const r = (group: string, seed: number, landed: boolean | null) => ({ group, seed, landed });
    expect(
      windowShortfalls([
        r('a', 1, true),
        r('a', 2, false),
        r('b', 3, false),
        r('c', 4, null),
        r('c', 5, null),
      ]),
    ).toEqual([]);
    expect(windowShortfalls([r('a', 1, true), r('a', 2, false), r('a', 3, false)])).toEqual([
      'a: only 1 of 3 trials landed their fault inside the window they claim (missed: seeds 2, 3)',
    ]);
  });
});
