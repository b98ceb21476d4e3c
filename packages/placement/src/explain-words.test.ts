import { describe, expect, it } from 'vitest';
import { cogPlacementRequest } from './cog.js';
import type { Decision } from './decision.js';
import { place } from './engine.js';
import { explain, type explainJson } from './explain.js';
import { cap, node } from './fixtures.test-util.js';
import type { PlacementRequest } from './request.js';
import { REQUIREMENT_REASONS, type Requirement, type RequirementReason } from './requirement.js';
import { requirementFailureText } from './requirement-words.js';
import { PlacementState } from './state.js';
import { PlacementView } from './view.js';

const opts = { now_ms: 1_000 };

/** The example native cog: two native variants, neither with an `os` (so Linux or macOS each). */
const nativeCog = {
  variants: {
    'x86_64-native': { route: 'native', arch: 'x86_64', file: 'bin/sensor.sh' },
    'aarch64-native': { route: 'native', arch: 'aarch64', file: 'bin/sensor.sh' },
  },
  resources: { cpu_pct: 5, ram_mb: 16 },
};

/** An x86_64 Linux node with the WASI route only (the demo's third host). */
const wasiOnly = node('wasi-only', { arch: 'x86_64', native: false, extra: [cap('runtime.wasi')] });

describe('placement explain in words (issue 16 item 8)', () => {
  it('names each alternative of a variant, says each reason once, in words, and keeps the codes in JSON', () => {
    const req = cogPlacementRequest(nativeCog, { workload: 'native-cog', pin: 'wasi-only' });
    const d = place(req, PlacementView.create([wasiOnly]), new PlacementState(), opts);
    expect(d.outcome).toBe('pin_refused');
    if (d.outcome !== 'pin_refused') return;
    // What the demo's pinned dry run prints.
    expect(d.error.message).toBe(
      'pin to wasi-only refused: requirements (' +
        'aarch64-native: node has no capability cpu.arch.aarch64; ' +
        'x86_64-native (linux): node has no capability runtime.native; ' +
        'x86_64-native (macos): node has no capability os.macos)',
    );
    expect(d.failures).toEqual([
      {
        constraint: 'requirements',
        detail: 'aarch64-native: node has no capability cpu.arch.aarch64',
        variant: 'aarch64-native',
        requirement: 'cpu.arch.aarch64',
        reason: 'no_such_id',
      },
      {
        constraint: 'requirements',
        detail: 'x86_64-native (linux): node has no capability runtime.native',
        variant: 'x86_64-native',
        alternative: 'linux',
        requirement: 'runtime.native',
        reason: 'no_such_id',
      },
      {
        constraint: 'requirements',
        detail: 'x86_64-native (macos): node has no capability os.macos',
        variant: 'x86_64-native',
        alternative: 'macos',
        requirement: 'os.macos',
        reason: 'no_such_id',
      },
    ]);
    const json = JSON.parse(explain(d, 'json')) as ReturnType<typeof explainJson>;
    expect(json.rows[0]?.failures?.map((f) => [f.variant, f.requirement, f.reason])).toEqual([
      ['aarch64-native', 'cpu.arch.aarch64', 'no_such_id'],
      ['x86_64-native', 'runtime.native', 'no_such_id'],
      ['x86_64-native', 'os.macos', 'no_such_id'],
    ]);
  });

  it('an unplaceable decision over the demo fleet says no line twice, and never a bare reason code', () => {
    const x86Native = node('x86-native', { arch: 'x86_64' });
    const d = place(
      cogPlacementRequest(nativeCog, { workload: 'native-cog' }),
      PlacementView.create([wasiOnly, node('small', { arch: 'x86_64', memory: 8 })]),
      new PlacementState(),
      opts,
    );
    expect(d.outcome).toBe('unplaceable');
    const text = explain(d);
    for (const r of d.rejected) {
      const lines = r.failures.map((f) => `${f.constraint}: ${f.detail}`);
      expect(new Set(lines).size).toBe(lines.length);
    }
    expect(text).not.toMatch(/no_such_id/);
    expect(text).toContain('aarch64-native: node has no capability cpu.arch.aarch64');
    // A node that fits a variant is not told about the alternatives it did not need.
    const ok = place(
      cogPlacementRequest(nativeCog, { workload: 'native-cog' }),
      PlacementView.create([x86Native]),
      new PlacementState(),
      opts,
    );
    expect(ok.outcome).toBe('placed');
    expect(ok.rejected).toEqual([]);
  });

  it('says every requirement reason in words that name the capability', () => {
    const cases: [Requirement, RequirementReason, string][] = [
      [{ id: 'cpu.arch.aarch64' }, 'no_such_id', 'node has no capability cpu.arch.aarch64'],
      [{ id_prefix: 'runtime.container' }, 'no_such_id', 'node has no runtime.container.* capability'],
      [
        { id: 'perf.cpu', min_provenance: 'measured' },
        'provenance_too_low',
        "node's perf.cpu is not known at least as measured (provenance)",
      ],
      [
        { id_prefix: 'runtime.container', where: [{ attr: 'arches_native', op: 'has', value: 'aarch64' }] },
        'predicate_failed',
        'no runtime.container.* capability of the node has arches_native includes "aarch64"',
      ],
      [
        { id: 'accel.gpu.0', where: [{ attr: 'memory_mb', op: 'gte', value: 4096 }] },
        'predicate_failed',
        "node's accel.gpu.0 does not have memory_mb >= 4096",
      ],
      [{ id: 'feed.udp5006' }, 'unavailable', "node's feed.udp5006 is reserved or busy"],
      [
        { id: 'feed.udp5006', exclusive: true },
        'contended',
        "node's feed.udp5006 is held by another workload",
      ],
      [
        { id_prefix: 'accel.gpu', count: 2 },
        'insufficient_count',
        'node has fewer than 2 usable accel.gpu.* capabilities',
      ],
      [
        { id_prefix: 'accel.gpu', count: 2 },
        'contended',
        'fewer than 2 matching accel.gpu.* capabilities of the node are free (the others are held by other workloads)',
      ],
    ];
    for (const [req, reason, words] of cases) expect(requirementFailureText(req, reason)).toBe(words);
    // Every reason has words of its own (none falls through to the code).
    for (const reason of REQUIREMENT_REASONS) {
      const t = requirementFailureText({ id_prefix: 'feed', count: 2, min_provenance: 'probed' }, reason);
      expect(t).toContain('feed.*');
      expect(t).not.toContain(reason);
    }
  });
});

describe('rejections counted per node (issue 16 item 9)', () => {
  /** Four variants, each needing a camera of another kind: a node with none of them fails four ways. */
  const fourWays: PlacementRequest = {
    workload: 'w',
    variants: ['a', 'b', 'c', 'd'].map((v) => ({
      name: v,
      execution: 'native' as const,
      requirements: [{ id: 'feed.cam', where: [{ attr: 'kind', op: 'eq' as const, value: v }] }],
    })),
  };
  const fits = node('fits', { extra: [cap('feed.cam', { attrs: { kind: 'd' } })] });
  const bare = node('bare', { extra: [cap('feed.cam', { attrs: { kind: 'z' } })] });
  const counted = (d: Decision) => d.rejected_by_constraint;

  it('one rejected node with four requirement lines counts 1 under requirements, on every path', () => {
    const state = new PlacementState();
    const placed = place(fourWays, PlacementView.create([fits, bare]), state, opts);
    expect(placed.outcome).toBe('placed');
    expect(placed.rejected[0]?.failures).toHaveLength(4);
    expect(counted(placed)).toEqual({ requirements: 1 });
    expect(explain(placed)).toContain('rejections by constraint: requirements 1\n');

    const unplaceable = place(
      fourWays,
      PlacementView.create([bare, node('bare2', { liveness: 'dead' })]),
      state,
      opts,
    );
    expect(unplaceable.outcome).toBe('unplaceable');
    expect(counted(unplaceable)).toEqual({ requirements: 2, liveness: 1 });
    if (unplaceable.outcome === 'unplaceable')
      expect(unplaceable.reason).toBe('no node passes every constraint (requirements 2, liveness 1)');

    const pinned = place({ ...fourWays, pin: 'bare' }, PlacementView.create([bare]), state, opts);
    expect(pinned.outcome).toBe('pin_refused');
    expect(counted(pinned)).toEqual({ requirements: 1 });
    // Summary detail counts each node under one constraint too.
    const summary = place(fourWays, PlacementView.create([fits, bare]), state, {
      ...opts,
      detail: 'summary',
    });
    expect(counted(summary)).toEqual({ requirements: 1 });
  });
});
