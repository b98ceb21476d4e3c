import type { NodeView } from '@heddle/control-plane';
import { describe, expect, it } from 'vitest';
import { painter } from '../format/colour.js';
import { nodeTable } from './node.js';

const base: NodeView = {
  node_id: 'a'.repeat(32),
  url: 'ws://10.0.0.7:7443',
  public_key: 'b'.repeat(64),
  key_source: 'pinned',
  tier: 'paired',
  assigned_tier: 'paired',
  pending_key: null,
  liveness: 'alive',
  routes: ['wasi'],
  software: null,
  capabilities: [],
  facts_expire_at_ms: null,
  last_seen_ms: 1_000,
  unreachable_since_ms: null,
  last_error: null,
  instances: 0,
  cordoned: false,
  labels: {},
  clock: null,
};

describe('node ls: clocks', () => {
  it('notes a node that answers with a clock more than 5 s off, and says nothing of one in step', () => {
    const clock = (offset_ms: number) => ({ offset_ms, error_ms: 3, measured_at_ms: 1_000, refused: false });
    const lines = nodeTable(
      [
        { ...base, clock: clock(12_345) },
        { ...base, node_id: 'c'.repeat(32), clock: clock(-40) },
      ],
      painter(false),
      2_000,
    );
    expect(lines.slice(3)).toEqual([
      `${'a'.repeat(32)}: clock 12.3 s ahead of this controller's (±3 ms); fix its time (NTP), see heddle alerts`,
    ]);
  });

  it('shows the clock skew error of a node refused for its clock', () => {
    const last_error =
      "clock skew: its clock is 45.0 s behind this controller's (±2 ms), outside the 30 s window signed requests and facts allow; fix its time (NTP): ws://10.0.0.7:7443: refused: expired: …";
    const lines = nodeTable(
      [
        {
          ...base,
          liveness: 'suspect',
          last_error,
          clock: { offset_ms: -45_002, error_ms: 2, measured_at_ms: 1_000, refused: true },
        },
      ],
      painter(false),
      2_000,
    );
    expect(lines.at(-1)).toBe(`${'a'.repeat(32)}: ${last_error}`);
  });
});
