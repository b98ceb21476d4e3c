// Placement engine throughput (decisions per second by fleet size), memory per node, and a C1M-style
// run: many placements with reservations onto 10,000 synthetic nodes. The baseline, measured in the
// same run, is a plain loop that only filters the nodes by one capability.
//
//   node bench/placement.bench.mjs          # C1M-style run scaled to 100,000 placements (projected to 1M)
//   node bench/placement.bench.mjs --full   # the full 1,000,000 placements
import { PlacementState, PlacementView, place } from '@heddle/placement';
import { bestOf, opsPerSecond, report } from './harness.mjs';

const FULL = process.argv.includes('--full');
const NOW = 1_700_000_000_000;

function synthNode(i) {
  const arch = i % 5 === 0 ? 'x86_64' : 'aarch64';
  const caps = [
    {
      id: `cpu.arch.${arch}`,
      attrs: { cores: 4 + (i % 4) * 4 },
      provenance: 'probed',
      state: 'available',
      exclusive: false,
    },
    { id: 'os.linux', attrs: {}, provenance: 'probed', state: 'available', exclusive: false },
    { id: 'runtime.native', attrs: {}, provenance: 'probed', state: 'available', exclusive: false },
    {
      id: 'mem.system',
      attrs: { size_mb: 4096 + (i % 8) * 1024 },
      provenance: 'probed',
      state: 'available',
      exclusive: false,
    },
  ];
  if (i % 3 === 0)
    caps.push({ id: 'runtime.wasi', attrs: {}, provenance: 'probed', state: 'available', exclusive: false });
  if (i % 4 === 0) {
    caps.push({
      id: 'runtime.container.docker',
      attrs: { arches_native: [arch], arches_emulated: arch === 'aarch64' ? ['x86_64'] : ['aarch64'] },
      provenance: 'probed',
      state: 'available',
      exclusive: false,
    });
  }
  if (i % 50 === 0)
    caps.push({
      id: 'accel.gpu.0',
      attrs: { memory_mb: 8192 },
      provenance: 'probed',
      state: 'available',
      exclusive: false,
    });
  if (i % 2 === 0)
    caps.push({
      id: 'perf.cpu',
      attrs: { score: (i * 7919) % 1000 },
      provenance: 'measured',
      state: 'available',
      exclusive: false,
    });
  return {
    node_id: `n${String(i).padStart(6, '0')}`,
    tier: i % 10 === 0 ? 'discovered' : 'paired',
    liveness: i % 97 === 0 ? 'suspect' : 'alive',
    capabilities: caps,
    expires_at_ms: NOW + 3_600_000,
    labels: { zone: `z${i % 10}` },
    load_permille: (i * 31) % 700,
  };
}

const fleet = (n) => Array.from({ length: n }, (_, i) => synthNode(i));

const native = (arch) => ({
  name: `${arch}-native`,
  execution: 'native',
  requirements: [{ id: `cpu.arch.${arch}` }, { id: 'os.linux' }, { id: 'runtime.native' }],
});
const REQUESTS = [
  {
    workload: 'sensor-a',
    variants: [
      native('aarch64'),
      { name: 'wasm32-wasi', execution: 'dev_fallback', requirements: [{ id: 'runtime.wasi' }] },
    ],
    resources: { memory_mb: 16, cpu_pct: 2 },
    min_tier: 'paired',
  },
  {
    workload: 'sensor-b',
    variants: [native('x86_64')],
    resources: { memory_mb: 16, cpu_pct: 2 },
    min_tier: 'paired',
    spread: { label: 'zone' },
  },
  {
    workload: 'web',
    variants: [
      {
        name: 'aarch64-container',
        execution: 'native',
        requirements: [
          { id_prefix: 'runtime.container', where: [{ attr: 'arches_native', op: 'has', value: 'aarch64' }] },
        ],
      },
      {
        name: 'aarch64-container',
        execution: 'emulated',
        requirements: [
          {
            id_prefix: 'runtime.container',
            where: [{ attr: 'arches_emulated', op: 'has', value: 'aarch64' }],
          },
        ],
      },
    ],
    resources: { memory_mb: 16, cpu_pct: 2 },
    allow_emulation: true,
    prefer: [{ label: 'zone', value: 'z3' }],
  },
  {
    workload: 'wasm',
    variants: [{ name: 'wasm32-wasi', execution: 'dev_fallback', requirements: [{ id: 'runtime.wasi' }] }],
    resources: { memory_mb: 8, cpu_pct: 1 },
  },
];

function baselineFilter(view) {
  // The simplest possible "placement": one pass keeping the nodes that have one capability.
  const nodes = view.nodes;
  let count = 0;
  let last = -1;
  for (let i = 0; i < nodes.length; i++) {
    if (nodes[i].capById.has('cpu.arch.aarch64')) {
      count++;
      last = i;
    }
  }
  return count + last;
}

const rows = [];
let sink = 0;
const decisionRates = {};
for (const n of [100, 1_000, 5_000, 10_000]) {
  const view = PlacementView.create(fleet(n));
  const state = new PlacementState();
  let k = 0;
  const base = bestOf(3, () => opsPerSecond(() => (sink += baselineFilter(view)), 400));
  const full = bestOf(3, () =>
    opsPerSecond(() => {
      state.generation++; // a new sampling start each decision, as after a reservation
      const d = place(REQUESTS[k++ & 3], view, state, { now_ms: NOW });
      sink += d.nodes_evaluated;
    }, 400),
  );
  const summary = bestOf(3, () =>
    opsPerSecond(() => {
      state.generation++;
      const d = place(REQUESTS[k++ & 3], view, state, { now_ms: NOW, detail: 'summary' });
      sink += d.nodes_evaluated;
    }, 400),
  );
  decisionRates[n] = full;
  rows.push([`baseline: filter ${n} nodes by one capability`, base, 'loops/s']);
  rows.push([`place, ${n} nodes (full detail)`, full, 'decisions/s', full / base]);
  rows.push([`place, ${n} nodes (summary detail)`, summary, 'decisions/s', summary / base]);
}
report('placement decisions (exact up to 1,000 nodes; above, max_candidates 32 + sticky/preferred)', rows);
const at5k = decisionRates[5_000];
console.log(
  `  target >= 5,000 decisions/s at 5,000 nodes (full detail): ${Math.round(at5k).toLocaleString('en-US')} -> ${at5k >= 5000 ? 'met' : 'NOT met'}`,
);

// Memory per node: heap growth of a 10,000-node view (facts objects included), after GC.
{
  const gc = globalThis.gc;
  if (gc) {
    gc();
    gc();
    const before = process.memoryUsage().heapUsed;
    const nodes = fleet(10_000);
    const view = PlacementView.create(nodes, { validate: false });
    gc();
    gc();
    const after = process.memoryUsage().heapUsed;
    sink += view.size + nodes.length;
    console.log(
      `  memory per node (view + its inputs, 10,000 nodes): ${Math.round((after - before) / 10_000).toLocaleString('en-US')} bytes`,
    );
  } else console.log('  memory per node: run with --expose-gc (bench/run.mjs does)');
}

// C1M-style: placements with reservations onto 10,000 nodes, summary detail, as a controller would.
{
  const total = FULL ? 1_000_000 : 100_000;
  const view = PlacementView.create(fleet(10_000), { validate: false });
  const state = new PlacementState();
  const t0 = performance.now();
  let placedCount = 0;
  let unplaceable = 0;
  for (let i = 0; i < total; i++) {
    const d = place(REQUESTS[i & 3], view, state, { now_ms: NOW, detail: 'summary' });
    if (d.outcome === 'placed') {
      state.reserve(d);
      placedCount++;
    } else unplaceable++;
  }
  const secs = (performance.now() - t0) / 1000;
  const projected = FULL ? secs : secs * (1_000_000 / total);
  console.log(
    `  C1M-style: ${total.toLocaleString('en-US')} placements with reservations onto 10,000 nodes in ${secs.toFixed(1)} s ` +
      `(${Math.round(total / secs).toLocaleString('en-US')}/s; placed ${placedCount.toLocaleString('en-US')}, unplaceable ${unplaceable})`,
  );
  console.log(
    `  ${FULL ? 'measured' : 'projected'} 1,000,000 placements: ${projected.toFixed(1)} s (target < 300 s: ${projected < 300 ? 'met' : 'NOT met'})` +
      (FULL ? '' : '  [run with --full for the real figure]'),
  );
}
if (sink === 42) console.log('');
