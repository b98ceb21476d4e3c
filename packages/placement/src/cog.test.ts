import { describe, expect, it } from 'vitest';
import { cogPlacementRequest, cogRequirements } from './cog.js';
import { place } from './engine.js';
import { PlacementError } from './errors.js';
import { cap, node } from './fixtures.test-util.js';
import { PlacementState } from './state.js';
import { PlacementView } from './view.js';

const cog = {
  id: 'hello',
  version: '1.0.0',
  variants: {
    'aarch64-native': { route: 'native', arch: 'aarch64', file: 'bin/hello-arm' },
    'x86_64-native': { route: 'native', arch: 'x86_64', file: 'bin/hello-x86' },
    'wasm32-wasi': { route: 'wasi', arch: 'wasm32', file: 'hello.wasm' },
    'arm64-container': { route: 'container', arch: 'arm64', file: 'image.tar' },
  },
  resources: { cpu_pct: 25, ram_mb: 128 },
  min_tier: 'paired',
};

describe('cog spec to requirements', () => {
  it('maps each route', () => {
    const r = cogRequirements(cog);
    expect(r.resources).toEqual({ memory_mb: 128, cpu_pct: 25 });
    expect(r.min_tier).toBe('paired');
    expect(r.variants).toEqual([
      {
        name: 'aarch64-native',
        execution: 'native',
        alternative: 'linux',
        requirements: [{ id: 'cpu.arch.aarch64' }, { id: 'os.linux' }, { id: 'runtime.native' }],
      },
      {
        name: 'aarch64-native',
        execution: 'native',
        alternative: 'macos',
        requirements: [{ id: 'cpu.arch.aarch64' }, { id: 'os.macos' }, { id: 'runtime.native' }],
      },
      {
        name: 'arm64-container',
        execution: 'native',
        alternative: 'native',
        requirements: [
          { id_prefix: 'runtime.container', where: [{ attr: 'arches_native', op: 'has', value: 'aarch64' }] },
        ],
      },
      {
        name: 'arm64-container',
        execution: 'emulated',
        alternative: 'emulated',
        requirements: [
          {
            id_prefix: 'runtime.container',
            where: [{ attr: 'arches_emulated', op: 'has', value: 'aarch64' }],
          },
        ],
      },
      { name: 'wasm32-wasi', execution: 'dev_fallback', requirements: [{ id: 'runtime.wasi' }] },
      {
        name: 'x86_64-native',
        execution: 'native',
        alternative: 'linux',
        requirements: [{ id: 'cpu.arch.x86_64' }, { id: 'os.linux' }, { id: 'runtime.native' }],
      },
      {
        name: 'x86_64-native',
        execution: 'native',
        alternative: 'macos',
        requirements: [{ id: 'cpu.arch.x86_64' }, { id: 'os.macos' }, { id: 'runtime.native' }],
      },
    ]);
    const mac = cogRequirements({
      ...cog,
      variants: { m: { route: 'native', arch: 'aarch64-apple-darwin', file: 'f' } },
    });
    expect(mac.variants.map((v) => v.requirements[1])).toEqual([{ id: 'os.macos' }]);
    const linuxOnly = cogRequirements({
      ...cog,
      variants: { l: { route: 'native', arch: 'aarch64', file: 'f', os: 'linux' } },
    });
    expect(linuxOnly.variants.map((v) => v.requirements[1])).toEqual([{ id: 'os.linux' }]);
    expect(linuxOnly.variants[0]?.alternative).toBeUndefined();
  });

  it('a macOS node gets a native variant (native runs on Linux or macOS)', () => {
    const macNode = {
      ...node('mac', { arch: 'aarch64' }),
      capabilities: [
        cap('cpu.arch.aarch64', { attrs: { cores: 8 } }),
        cap('os.macos'),
        cap('mem.system', { attrs: { size_mb: 16384 } }),
        cap('mem.unified'),
        cap('runtime.native'),
        cap('runtime.wasi'),
      ],
    };
    const req = cogPlacementRequest(cog, { workload: 'hello' });
    const d = place(req, PlacementView.create([macNode]), new PlacementState(), { now_ms: 0 });
    expect(d.outcome === 'placed' && [d.node_id, d.variant, d.execution]).toEqual([
      'mac',
      'aarch64-native',
      'native',
    ]);
    // A variant restricted to Linux does not run there (it falls back to WASI).
    const linuxOnly = {
      ...cog,
      variants: {
        ...cog.variants,
        'aarch64-native': { route: 'native', arch: 'aarch64', file: 'b', os: 'linux' },
      },
    };
    const w = place(
      cogPlacementRequest(linuxOnly, { workload: 'hello' }),
      PlacementView.create([macNode]),
      new PlacementState(),
      {
        now_ms: 0,
      },
    );
    expect(w.outcome === 'placed' && w.variant).toBe('wasm32-wasi');
  });

  it('places a cog: native first, WASI as fallback, emulated container only when allowed', () => {
    const req = cogPlacementRequest(cog, { workload: 'hello', min_tier: 'discovered' });
    expect(req.min_tier).toBe('paired'); // never lowered
    const state = new PlacementState();
    const riscv = node('riscv', { arch: 'riscv64', extra: [cap('runtime.wasi')] });
    const emu = node('emu', {
      arch: 'riscv64',
      native: false,
      extra: [
        cap('runtime.container.podman', {
          attrs: { arches_native: ['riscv64'], arches_emulated: ['aarch64'] },
        }),
      ],
    });
    const d = place(req, PlacementView.create([riscv, emu]), state, { now_ms: 0 });
    expect(d.outcome === 'placed' && [d.node_id, d.variant, d.execution]).toEqual([
      'riscv',
      'wasm32-wasi',
      'dev_fallback',
    ]);
    const e = place(
      cogPlacementRequest(cog, { workload: 'hello', allow_emulation: true }),
      PlacementView.create([emu]),
      state,
      { now_ms: 0 },
    );
    expect(e.outcome === 'placed' && [e.variant, e.execution]).toEqual(['arm64-container', 'emulated']);
    const f = place(req, PlacementView.create([emu]), state, { now_ms: 0 });
    expect(f.outcome).toBe('unplaceable');
  });

  it('refuses junk and unknown routes, naming the field', () => {
    const bad: [unknown, string, string][] = [
      [{ ...cog, variants: {} }, 'invalid_cog', 'variants'],
      [{ ...cog, resources: { cpu_pct: 1 } }, 'invalid_cog', 'resources.ram_mb'],
      [{ ...cog, min_tier: 'root' }, 'invalid_cog', 'min_tier'],
      [
        { ...cog, variants: { v: { route: 'native', arch: 'a/b', file: 'f' } } },
        'invalid_cog',
        'variants.v.arch',
      ],
      [
        { ...cog, variants: { v: { route: 'jvm', arch: 'a', file: 'f' } } },
        'unknown_route',
        'variants.v.route',
      ],
      ['nope', 'invalid_cog', '$'],
    ];
    for (const [input, code, field] of bad) {
      try {
        cogRequirements(input);
        expect.unreachable();
      } catch (e) {
        expect(e).toBeInstanceOf(PlacementError);
        expect([(e as PlacementError).code, (e as PlacementError).field]).toEqual([code, field]);
      }
    }
  });
});
