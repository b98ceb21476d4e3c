// A namespace cluster with real daemons: each in its own namespace at its own address, placing works
// through the relay, and teardown (or a killed test process, via the reaper) leaves nothing behind.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { NetCluster } from './net-cluster.js';
import { listLinks, listNamespaces, reapStale } from './registry.js';
import { netnsSkipReason } from './sys.js';

const skip = netnsSkipReason();
if (skip !== undefined) console.warn(`[netns] ${skip}`);

const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

describe.skipIf(skip !== undefined)('namespace cluster', () => {
  it('runs each daemon in its own namespace at its own address, and teardown removes everything', async () => {
    const c = await NetCluster.startNet({ hosts: 2, packages: ['native'] });
    const names = c.fabric.namespaces();
    try {
      const ctlPids = await c.fabric.pids('controller');
      expect(ctlPids).toContain(c.controller?.proc.pid);
      for (const h of c.hosts) expect(await c.fabric.pids(h.index)).toContain(h.daemon?.proc.pid);
      const nodes = await c.nodes();
      expect(nodes.map((n) => n.url).sort()).toEqual(c.hosts.map((h) => h.url).sort());
      const r = await c.api().place({
        package_dir: c.packages.native?.dir ?? '',
        node: c.hostAt(1).nodeId,
        mode: { type: 'interval', secs: 60 },
      });
      expect(r.status).toBe('placed');
      const listing = await c.listing(1);
      expect(listing.instances.map((i) => i.instance_id)).toContain(r.instance?.instance_id);
    } finally {
      await c.teardown();
    }
    expect(listNamespaces().filter((n) => names.includes(n))).toEqual([]);
    expect(listLinks().filter((l) => l === c.fabric.bridge)).toEqual([]);
  }, 240_000);

  it('a test process killed with SIGKILL leaves namespaces the next run reaps', async () => {
    const script = `import { Fabric } from ${JSON.stringify(pathToFileURL(fileURLToPath(new URL('./fabric.ts', import.meta.url))).href)};
const f = await Fabric.create(1);
console.log(JSON.stringify(f.namespaces()));
setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--import', tsx, '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const made: string[] = await new Promise((resolve, reject) => {
      child.stdout?.once('data', (d: Buffer) => resolve(JSON.parse(d.toString()) as string[]));
      child.once('exit', (code) => reject(new Error(`the child exited ${code}`)));
    });
    expect(listNamespaces()).toEqual(expect.arrayContaining(made));
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    // Its exit handlers never ran: the namespaces are still there until a reaper runs.
    expect(listNamespaces()).toEqual(expect.arrayContaining(made));
    reapStale();
    expect(listNamespaces().filter((n) => made.includes(n))).toEqual([]);
  }, 120_000);
});
