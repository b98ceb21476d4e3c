// A host's disk filling up mid-transfer. The hosts' package stores are small tmpfs filesystems
// (`mountPackageStores`, before any place), and the cluster holds a `native-big` package larger than
// a third of one. The kind places that package pinned to one host and watches the host's packages
// directory; as soon as the fetch's incoming directory holds the first bytes of the big file (the
// transfer is under way) it fills the filesystem with a file of all the space left. Landed when: bytes
// of the file were on disk at the fill, the host then refused the place with `no_space` (ENOSPC
// writing a piece, from its chain), and nothing of it was left behind. Lifted by removing
// the file; the same place is then accepted (and unloaded again, so that the trial's own orders are
// all the cluster holds).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, statfsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NetCluster } from '../net-cluster.js';
import type { FaultContext, FaultRecord, NetFaultKind } from './kind.js';

/** The size of each host's package store filesystem (MiB) and of the big package's ballast. */
export const STORE_MIB = 48;
export const BIG_PACKAGE_BYTES = 20 * 1024 * 1024;

const FILLER = 'disk-full.filler';
/** The big file of the native-big package (packages.ts). */
const BIG_FILE = 'ballast.bin';

/** The packages directory of host `i`. */
export function packagesDir(c: NetCluster, i: number): string {
  return join(c.hostAt(i).dataDir, 'packages');
}

/**
 * Gives every host of `c` a package store of its own small tmpfs (STORE_MIB): each host is stopped,
 * the tmpfs mounted at its packages directory (empty: nothing was placed yet), and started again, so
 * that its namespace (a copy of the mount table made when it starts) sees it. Returns the unmount.
 * Needs root, like the namespaces.
 */
export async function mountPackageStores(c: NetCluster): Promise<() => void> {
  const mounted: string[] = [];
  const unmount = (): void => {
    for (const m of mounted.splice(0)) {
      try {
        execFileSync('umount', ['-l', m]);
      } catch {
        // Already gone with its directory.
      }
    }
  };
  try {
    for (const h of c.hosts) {
      await c.killHost(h.index);
      const dir = packagesDir(c, h.index);
      mkdirSync(dir, { recursive: true });
      for (const e of readdirSync(dir)) rmSync(join(dir, e), { recursive: true, force: true });
      execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${STORE_MIB}m`, 'heddle-faults-store', dir]);
      mounted.push(dir);
      await c.startHost(h.index);
    }
  } catch (err) {
    unmount();
    throw err;
  }
  return unmount;
}

/** The `workload.refuse` records of `no_space` in host `i`'s chain: their reasons. */
function noSpaceRefusals(c: NetCluster, i: number): string[] {
  const file = join(c.hostAt(i).dataDir, 'chain.jsonl');
  const out: string[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.includes('"no_space"')) continue;
    // cast: a line of the host's own chain file (JSON objects, one a line).
    const e = JSON.parse(line) as { payload?: { code?: unknown; reason?: unknown } };
    if (e.payload?.code === 'no_space') out.push(String(e.payload.reason));
  }
  return out;
}

/** The disk of one host filled while it fetches a package; freed after. */
export const diskFull: NetFaultKind = {
  name: 'disk-full',
  title: "a host's package store filling up mid-transfer",
  async run(ctx: FaultContext): Promise<FaultRecord> {
    const c = ctx.cluster;
    const pkg = c.packages['native-big'];
    if (pkg === undefined) throw new Error('disk-full needs the native-big package (see its module)');
    const t = ctx.rng.pick(ctx.candidates);
    const dir = packagesDir(c, t);
    const api = c.api();
    // Loaded, not started: the place after the lift is unloaded again at once.
    const order = {
      package_dir: pkg.dir,
      mode: { type: 'interval' as const, secs: 3_600 },
      start: false,
      node: c.hostAt(t).nodeId,
    };
    const before = noSpaceRefusals(c, t).length;
    // Ready before the transfer begins: a buffer of all the room there is.
    const s = statfsSync(dir);
    const filler = Buffer.alloc(Number(s.bavail) * Number(s.bsize), 0x5a);
    let sawIncoming = '';
    let appliedAt = 0;
    let filled = 0;
    let writtenAtFill = 0;
    let stop = false;
    // Once the fetch's incoming directory holds the first bytes of the big file (the transfer is under
    // way), the disk is filled at once.
    const watcher = (async () => {
      while (!stop) {
        const incoming = sawIncoming || readdirSync(dir).find((e) => e.startsWith('.incoming'));
        if (incoming !== undefined && incoming !== '') {
          sawIncoming = incoming;
          const size = statSync(join(dir, incoming, BIG_FILE), { throwIfNoEntry: false })?.size ?? 0;
          if (size > 0) {
            writtenAtFill = size;
            try {
              writeFileSync(join(dir, FILLER), filler);
            } catch {
              // ENOSPC at the end: the file holds what fitted, which is the point.
            }
            filled = statSync(join(dir, FILLER), { throwIfNoEntry: false })?.size ?? 0;
            appliedAt = Date.now();
            return;
          }
        }
        await new Promise((r) => setImmediate(r));
      }
    })();
    // A little latency on the host's link stretches the transfer (about 20 MiB) over some hundreds of ms.
    await c.relay.mode(`h${t}`, { latencyMs: 2 });
    let outcome = '';
    let liftedAt = 0;
    let again = '';
    try {
      outcome = await api.place(order).then(
        (a) => `status ${a.status}`,
        (err: unknown) => String(err).slice(0, 200),
      );
      // Hold the full disk for what is left of the hold (the host keeps running meanwhile).
      await new Promise((res) =>
        setTimeout(res, Math.max(0, Math.min(ctx.holdMs, 2_000) - (Date.now() - appliedAt))),
      );
    } finally {
      stop = true;
      await watcher;
      await c.relay.mode(`h${t}`, { latencyMs: 0 });
      liftedAt = Date.now();
      rmSync(join(dir, FILLER), { force: true });
    }
    const refusals = noSpaceRefusals(c, t).slice(before);
    const left = readdirSync(dir).filter((e) => e.startsWith('.incoming') || e === pkg.manifestHash);
    // Space freed: the same place is accepted, then unloaded again.
    try {
      const a = await api.place(order);
      again = a.status;
      if (a.instance !== null) await api.unload(a.instance.instance_id);
    } catch (err) {
      again = String(err).slice(0, 200);
    }
    const piece = refusals.map((r) => /piece (\d+): ENOSPC/.exec(r)).find((m) => m !== null);
    // Bytes of the file were on disk when it filled, and the fetch then failed writing a piece of it.
    const midTransfer = writtenAtFill > 0 && appliedAt > 0 && piece !== undefined && piece !== null;
    const landed = sawIncoming !== '' && midTransfer && left.length === 0 && again === 'placed';
    return {
      kind: 'disk-full',
      targets: [t],
      params: `${STORE_MIB} MiB store, ${pkg.bytes} B package`,
      appliedAt,
      liftedAt,
      landed,
      evidence: `host ${t}: ${sawIncoming === '' ? 'NO incoming directory seen' : `filled ${filled} B once ${sawIncoming.slice(0, 20)}... held ${writtenAtFill} B of ${BIG_FILE}`}; place: ${outcome}; host refused no_space: ${refusals[0]?.slice(0, 200) ?? 'NONE'}; ${midTransfer ? `ENOSPC at piece ${piece?.[1]} (mid-transfer)` : 'NOT mid-transfer'}; left after: [${left.join(', ')}]; after freeing: ${again}`,
    };
  },
};
