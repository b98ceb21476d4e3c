// Group commit of the place path, reservations of places in flight, and the durability of an
// acknowledged place across kill -9 of a real controller process.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { openChainFile } from '@heddle/chain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simDriver, simNodeId } from './sim-driver.test-util.js';
import { SqliteStateStore } from './sqlite-store.js';
import { examplePackage, openPlane, planeError, type TestPlane, tempDir } from './test-fixtures.js';

const srcDir = dirname(fileURLToPath(import.meta.url));
const repoDir = join(srcDir, '../../..');
let pkg: string;

beforeAll(async () => {
  pkg = await examplePackage('wasi-cog');
});

describe('group commit and reservations on the place path', () => {
  let p: TestPlane;
  afterAll(async () => {
    await p?.close();
  });

  it('concurrent places share transactions, and two nodes are never overcommitted', async () => {
    // Two nodes of 300 MB: the wasi cog takes 4 MB, so 75 instances fit on each, 150 in all.
    p = await openPlane(tempDir(), {}, undefined, { drivers: [simDriver(300)] });
    for (const i of [0, 1]) await p.plane.addNodeOf('sim', `sim://${simNodeId(i)}`, { tier: 'paired' });
    const first = await p.plane.place({ package_dir: pkg, values: { n: -1 }, start: true });
    const manifest = first.instance?.manifest_hash ?? '';
    const before = p.store.groupCommits;
    const results = await Promise.allSettled(
      Array.from({ length: 200 }, (_, n) =>
        p.plane.place({ manifest_hash: manifest, values: { n }, start: true }),
      ),
    );
    const placed = results.filter((r) => r.status === 'fulfilled').length;
    expect(placed).toBe(149); // 150 fit; one is the first place
    for (const r of results) {
      if (r.status === 'rejected') expect((r.reason as { code?: string }).code).toBe('unplaceable');
    }
    const perNode = new Map<string, number>();
    for (const i of p.plane.instances()) perNode.set(i.node_id, (perNode.get(i.node_id) ?? 0) + 1);
    expect([...perNode.values()]).toEqual([75, 75]);
    // Each place writes its order, its unsettled mark and its placement: with group commit the 200
    // places share a few transactions (one fsync each) instead of 600.
    const commits = p.store.groupCommits - before;
    expect(commits).toBeGreaterThan(0);
    expect(commits).toBeLessThan(60);
    // Every acknowledged place is on disk: the store reopened by another connection sees them all.
    const again = await planeError(p.plane.place({ manifest_hash: manifest, values: { n: 999 } }));
    expect(again.code).toBe('unplaceable');
  });
});

/** Starts a controller process placing continuously onto in-process nodes; it prints `ack <instance> <decision>`. */
function spawnPlacer(dir: string, workers: number): ChildProcess {
  const tsconfig = join(dir, 'tsconfig.json');
  writeFileSync(
    tsconfig,
    JSON.stringify({
      compilerOptions: { baseUrl: repoDir, paths: { '@heddle/*': ['packages/*/src/index.ts'] } },
    }),
  );
  const file = join(dir, 'placer.mts');
  const src = (f: string) => JSON.stringify(join(srcDir, f));
  writeFileSync(
    file,
    `import { simDriver, simNodeId } from ${src('sim-driver.test-util.ts')};
import { openPlane } from ${src('test-plane.ts')};
const p = await openPlane(${JSON.stringify(dir)}, {}, undefined, { drivers: [simDriver(1 << 20)] });
for (let i = 0; i < 4; i++) await p.plane.addNodeOf('sim', 'sim://' + simNodeId(i), { tier: 'paired' });
const first = await p.plane.place({ package_dir: ${JSON.stringify(pkg)}, values: { n: -1 }, start: true });
const manifest = first.instance.manifest_hash;
process.stdout.write('start\\n');
let n = 0;
await Promise.all(Array.from({ length: ${workers} }, async () => {
  for (;;) {
    const r = await p.plane.place({ manifest_hash: manifest, values: { n: n++ }, start: true });
    process.stdout.write('ack ' + r.instance.instance_id + ' ' + r.decision_id + '\\n');
  }
}));
`,
  );
  const loader = pathToFileURL(join(repoDir, 'node_modules/tsx/dist/loader.mjs')).href;
  return spawn(process.execPath, ['--import', loader, file], {
    cwd: srcDir,
    env: { ...process.env, TSX_TSCONFIG_PATH: tsconfig },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

describe('an acknowledged place survives kill -9 of the controller', () => {
  it('every place acknowledged before the kill is in the reopened store and chain; places in flight were cut', async () => {
    let cut = false;
    for (let round = 0; round < 3 && !cut; round++) {
      const dir = mkdtempSync(join(tempDir(), 'placer-'));
      const child = spawnPlacer(dir, 32);
      const acks: string[][] = [];
      let err = '';
      let buf = '';
      const enough = new Promise<void>((resolve, reject) => {
        child.stdout?.on('data', (d: Buffer) => {
          buf += d.toString();
          const parts = buf.split('\n');
          buf = parts.pop() ?? '';
          for (const line of parts) if (line.startsWith('ack ')) acks.push(line.split(' ').slice(1));
          if (acks.length >= 150 + round * 100) resolve();
        });
        child.stderr?.on('data', (d: Buffer) => {
          err += d.toString();
        });
        child.on('exit', () => reject(new Error(`placer exited: ${err}`)));
      });
      await enough;
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
      expect(child.signalCode).toBe('SIGKILL');
      // Acks printed before the kill and read after it count too: each was printed after its place returned.
      const store = SqliteStateStore.open(join(dir, 'state.db'));
      const chain = await openChainFile(join(dir, 'chain.jsonl'));
      try {
        for (const [instance, decision] of acks) {
          expect(store.getPlacement(instance ?? '')?.state, instance).toBe('running');
          expect(chain.getByHash(decision ?? ''), decision).toBeDefined();
        }
        // The kill landed while places were in flight: orders on disk that were never acknowledged.
        cut = store.listOrders().length > acks.length + 1;
      } finally {
        store.close();
        await chain.close();
      }
    }
    expect(cut).toBe(true);
  }, 60_000);
});
