import { describe, expect, it } from 'vitest';
import { type Capability, parseCapabilities, parseCapability } from './capability.js';
import { PlacementError } from './errors.js';
import { cap } from './fixtures.test-util.js';
import {
  checkRequirement,
  parseRequirement,
  type Requirement,
  type RequirementReason,
} from './requirement.js';
import { idHasPrefix } from './vocabulary.js';

function set(...caps: Capability[]) {
  return { caps, capById: new Map(caps.map((c) => [c.id, c])) };
}

const gpu0 = cap('accel.gpu.0', {
  attrs: { memory_mb: 8192, vendor: 'nvidia', apis: ['cuda', 'vulkan'] },
  exclusive: true,
});
const gpu1 = cap('accel.gpu.1', {
  attrs: { memory_mb: 4096, vendor: 'amd', apis: ['vulkan'] },
  exclusive: true,
});
const container = cap('runtime.container.docker', {
  attrs: { arches_native: ['aarch64'], arches_emulated: ['x86_64'] },
});
const measured = cap('perf.cpu', { provenance: 'measured', attrs: { score: 700 } });
const claimed = cap('feed.udp5006', { provenance: 'claimed' });
const busy = cap('accel.npu', { state: 'busy' });
const reserved = cap('accel.tpu', { state: 'reserved' });
const degraded = cap('runtime.wasi', { state: 'degraded' });
const node = set(gpu0, gpu1, container, measured, claimed, busy, reserved, degraded);

describe('checkRequirement', () => {
  const cases: [string, Requirement, RequirementReason | null, ReadonlySet<string>?][] = [
    ['exact id', { id: 'perf.cpu' }, null],
    ['missing id', { id: 'perf.gpu' }, 'no_such_id'],
    ['prefix on a segment boundary', { id_prefix: 'runtime.container' }, null],
    ['prefix inside a segment is no match', { id_prefix: 'runtime.contain' }, 'no_such_id'],
    ['eq', { id_prefix: 'accel.gpu', where: [{ attr: 'vendor', op: 'eq', value: 'amd' }] }, null],
    [
      'eq fails',
      { id_prefix: 'accel.gpu', where: [{ attr: 'vendor', op: 'eq', value: 'intel' }] },
      'predicate_failed',
    ],
    ['eq on a list', { id: 'accel.gpu.1', where: [{ attr: 'apis', op: 'eq', value: ['vulkan'] }] }, null],
    ['gte', { id_prefix: 'accel.gpu', where: [{ attr: 'memory_mb', op: 'gte', value: 8192 }] }, null],
    [
      'gte fails',
      { id_prefix: 'accel.gpu', where: [{ attr: 'memory_mb', op: 'gte', value: 8193 }] },
      'predicate_failed',
    ],
    ['lte', { id_prefix: 'accel.gpu', where: [{ attr: 'memory_mb', op: 'lte', value: 4096 }] }, null],
    [
      'lte fails',
      { id_prefix: 'accel.gpu', where: [{ attr: 'memory_mb', op: 'lte', value: 100 }] },
      'predicate_failed',
    ],
    ['in', { id_prefix: 'accel.gpu', where: [{ attr: 'vendor', op: 'in', value: ['amd', 'intel'] }] }, null],
    [
      'in fails',
      { id_prefix: 'accel.gpu', where: [{ attr: 'vendor', op: 'in', value: ['intel'] }] },
      'predicate_failed',
    ],
    [
      'has',
      { id_prefix: 'runtime.container', where: [{ attr: 'arches_native', op: 'has', value: 'aarch64' }] },
      null,
    ],
    [
      'has fails',
      { id_prefix: 'runtime.container', where: [{ attr: 'arches_native', op: 'has', value: 'x86_64' }] },
      'predicate_failed',
    ],
    [
      'missing attr fails',
      { id: 'perf.cpu', where: [{ attr: 'nope', op: 'eq', value: 1 }] },
      'predicate_failed',
    ],
    [
      'gte on a string fails',
      { id_prefix: 'accel.gpu', where: [{ attr: 'vendor', op: 'gte', value: 1 }] },
      'predicate_failed',
    ],
    ['min provenance met', { id: 'perf.cpu', min_provenance: 'measured' }, null],
    ['provenance too low', { id: 'feed.udp5006', min_provenance: 'probed' }, 'provenance_too_low'],
    ['busy is usable shared', { id: 'accel.npu' }, null],
    ['busy is unavailable exclusively', { id: 'accel.npu', exclusive: true }, 'unavailable'],
    ['reserved is unavailable', { id: 'accel.tpu' }, 'unavailable'],
    ['degraded is usable', { id: 'runtime.wasi' }, null],
    ['count met', { id_prefix: 'accel.gpu', count: 2 }, null],
    ['insufficient count', { id_prefix: 'accel.gpu', count: 3 }, 'insufficient_count'],
    ['contended (claimed)', { id: 'accel.gpu.0' }, 'contended', new Set(['accel.gpu.0'])],
    ['contended count', { id_prefix: 'accel.gpu', count: 2 }, 'contended', new Set(['accel.gpu.1'])],
    ['one of two left', { id_prefix: 'accel.gpu' }, null, new Set(['accel.gpu.1'])],
  ];
  it.each(cases)('%s', (_name, req, want, claims) => {
    expect(parseRequirement(req)).toEqual(req);
    expect(checkRequirement(req, node, claims)).toBe(want);
  });

  it('collects the matched ids', () => {
    const out: string[] = [];
    expect(checkRequirement({ id_prefix: 'accel.gpu', count: 1 }, node, undefined, out)).toBeNull();
    expect(out).toEqual(['accel.gpu.0']);
    const none: string[] = [];
    expect(checkRequirement({ id_prefix: 'accel.gpu', count: 5 }, node, undefined, none)).toBe(
      'insufficient_count',
    );
    expect(none).toEqual([]);
  });

  it('matches prefixes only on segment boundaries', () => {
    expect(idHasPrefix('runtime.container.docker', 'runtime.container')).toBe(true);
    expect(idHasPrefix('runtime.container', 'runtime.container')).toBe(true);
    expect(idHasPrefix('runtime.containerd', 'runtime.container')).toBe(false);
    expect(idHasPrefix('runtime', 'runtime.container')).toBe(false);
  });
});

describe('junk requirements and capabilities', () => {
  const bad: [unknown, string][] = [
    [{}, 'id'],
    [{ id: 'a', id_prefix: 'a' }, 'id'],
    [{ id: 'Cpu.Arch' }, 'id'],
    [{ id: 'a..b' }, 'id'],
    [{ id: 'a', count: 0 }, 'count'],
    [{ id: 'a', count: 1.5 }, 'count'],
    [{ id: 'a', where: [{ attr: 'x', op: 'gte', value: 'big' }] }, 'where[0].value'],
    [{ id: 'a', where: [{ attr: 'x', op: 'in', value: 'a' }] }, 'where[0].value'],
    [{ id: 'a', where: [{ attr: 'x', op: 'has', value: ['a'] }] }, 'where[0].value'],
    [{ id: 'a', where: [{ attr: 'x', op: 'like', value: 'a' }] }, 'where[0].op'],
    [{ id: 'a', min_provenance: 'rumoured' }, 'min_provenance'],
    [{ id: 'a', extra: 1 }, '$'],
  ];
  it.each(bad)('refuses %j naming %s', (input, field) => {
    try {
      parseRequirement(input);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(PlacementError);
      expect((e as PlacementError).code).toBe('invalid_requirement');
      expect((e as PlacementError).field).toBe(field);
      expect((e as PlacementError).message).toContain(field);
    }
  });

  it('refuses junk capabilities naming the field', () => {
    expect(() => parseCapability({ id: 'x', provenance: 'sure' })).toThrow(/provenance/);
    expect(() => parseCapability({ id: 'x', attrs: { size: 1.5 } })).toThrow(/attrs/);
    expect(() => parseCapability({ id: 'x', state: 'on' })).toThrow(/state/);
    expect(() => parseCapability({ id: 'x', attrs: { 'Bad-Key': 1 } })).toThrow(/attrs/);
    try {
      parseCapabilities([{ id: 'a' }, { id: 'a' }]);
      expect.unreachable();
    } catch (e) {
      expect((e as PlacementError).field).toBe('capabilities[1].id');
    }
    expect(parseCapability({ id: 'x.y' })).toEqual({
      id: 'x.y',
      attrs: {},
      provenance: 'claimed',
      state: 'available',
      exclusive: false,
    });
  });
});
