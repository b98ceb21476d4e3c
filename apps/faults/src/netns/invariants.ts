// Invariants read from outside, in every namespace of a cluster: the process table of each namespace
// (`ip netns pids`, then /proc: each workload process by the identity its host gave it in its
// environment, `HEDDLE_INSTANCE_ID`, one copy per process group; each daemon by its command line),
// never the harness's own records. A sampler reads it during a trial, so that an order running twice
// at any moment is seen (required when the hosts hold a controller lease).
import { readFileSync } from 'node:fs';
import type { Placement } from '@heddle/operator-api';
import type { NetCluster } from './net-cluster.js';

/** A workload process found in a namespace's process table. */
export interface NsWorkload {
  readonly host: number;
  readonly instanceId: string;
  readonly pid: number;
  readonly pgid: number;
}

function procEnv(pid: number): string[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0');
  } catch {
    return undefined;
  }
}

function procStat(pid: number): { state: string; pgid: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: f[0] ?? '', pgid: Number(f[2]) };
  } catch {
    return undefined;
  }
}

function procCmdline(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return [];
  }
}

/** Every live workload process in host `i`'s namespace (`pids`: its processes, default `ip netns pids`). */
export async function namespaceWorkloads(
  c: NetCluster,
  i: number,
  pids?: readonly number[],
): Promise<NsWorkload[]> {
  const out: NsWorkload[] = [];
  for (const pid of pids ?? (await c.fabric.pids(i).catch(() => [] as number[]))) {
    const id = procEnv(pid)
      ?.find((e) => e.startsWith('HEDDLE_INSTANCE_ID='))
      ?.slice('HEDDLE_INSTANCE_ID='.length);
    if (id === undefined || id === '') continue;
    const st = procStat(pid);
    if (st === undefined || st.state === 'Z') continue;
    out.push({ host: i, instanceId: id, pid, pgid: st.pgid });
  }
  return out;
}

/**
 * Copies (process groups) of each instance running in any host namespace now: instance -> host per
 * copy. `fast`: the namespaces' processes from one scan of /proc (`Fabric.hostPids`) rather than an
 * `ip netns pids` per namespace (the same answer, for the sampler).
 */
export async function runningCopies(
  c: NetCluster,
  fast = false,
): Promise<Map<string, { host: number; pgid: number }[]>> {
  const scan = fast ? c.fabric.hostPids() : undefined;
  const all = (
    await Promise.all(
      c.hosts.map((h) =>
        namespaceWorkloads(c, h.index, scan === undefined ? undefined : (scan.get(h.index) ?? [])),
      ),
    )
  ).flat();
  const m = new Map<string, { host: number; pgid: number }[]>();
  for (const w of all) {
    const list = m.get(w.instanceId) ?? [];
    if (!list.some((x) => x.host === w.host && x.pgid === w.pgid)) list.push({ host: w.host, pgid: w.pgid });
    m.set(w.instanceId, list);
  }
  return m;
}

/** Daemon processes in a namespace, by what they run (`controller` or `host`), from their command lines. */
export async function namespaceDaemons(
  c: NetCluster,
  role: 'controller' | number,
): Promise<{ controller: number; host: number }> {
  const n = { controller: 0, host: 0 };
  for (const pid of await c.fabric.pids(role).catch(() => [] as number[])) {
    const argv = procCmdline(pid);
    const st = procStat(pid);
    if (st === undefined || st.state === 'Z') continue;
    if (argv.some((a) => a.endsWith('/controller/dist/bin.js')) && argv.includes('run')) n.controller++;
    if (argv.some((a) => a.endsWith('/host/dist/bin.js')) && argv.includes('run')) n.host++;
  }
  return n;
}

/**
 * Orders running more than once now: every instance's copies found in the process tables, grouped by
 * the order the controller's records give each instance (`orderOf`; an instance it does not know
 * counts as an order of its own). One line per violation.
 */
export function duplicates(
  copies: ReadonlyMap<string, readonly { host: number; pgid: number }[]>,
  orderOf: ReadonlyMap<string, string>,
): string[] {
  const byOrder = new Map<string, string[]>();
  for (const [id, list] of copies) {
    const order = orderOf.get(id) ?? `(instance ${id})`;
    for (const x of list)
      byOrder.set(order, [...(byOrder.get(order) ?? []), `${id}@host ${x.host} pgid ${x.pgid}`]);
  }
  return [...byOrder]
    .filter(([, l]) => l.length > 1)
    .map(([order, l]) => `order ${order} runs ${l.length} times: ${l.join(', ')}`);
}

/** Samples the process tables every `everyMs` while a trial runs (see the file comment). */
export class DuplicateSampler {
  readonly #c: NetCluster;
  readonly #orderOf = new Map<string, string>();
  #timer: NodeJS.Timeout | undefined;
  #busy = false;
  samples = 0;
  /** Every violation seen, with when (epoch ms). */
  readonly violations: { at: number; what: string }[] = [];

  constructor(c: NetCluster) {
    this.#c = c;
  }

  /** Learns instance -> order from the controller's placements (every placement ever seen is kept). */
  learn(placements: readonly Placement[]): void {
    for (const p of placements) this.#orderOf.set(p.instance_id, p.order_id);
  }

  /** One sample now. */
  async sample(): Promise<void> {
    const copies = await runningCopies(this.#c, true);
    const unknown = [...copies.keys()].some((id) => !this.#orderOf.has(id));
    if (unknown)
      this.learn(
        await this.#c
          .api()
          .instances()
          .catch(() => []),
      );
    this.samples++;
    for (const what of duplicates(copies, this.#orderOf)) this.violations.push({ at: Date.now(), what });
  }

  start(everyMs = 500): void {
    this.#timer = setInterval(() => {
      if (this.#busy) return;
      this.#busy = true;
      this.sample()
        .catch(() => undefined)
        .finally(() => {
          this.#busy = false;
        });
    }, everyMs);
  }

  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

/**
 * The checks after convergence, from outside (beyond the loopback suite's convergence check, which
 * compares the controller's records, every host's listing and the processes under each data
 * directory): exactly one controller daemon in the controller's namespace and one host daemon in
 * each host's; no order running twice in the process tables; every workload process in a host's
 * namespace is a placement the controller's records say runs on that host.
 */
export async function netInvariants(c: NetCluster): Promise<string[]> {
  const problems: string[] = [];
  const ctl = await namespaceDaemons(c, 'controller');
  if (ctl.controller !== 1 || ctl.host !== 0)
    problems.push(
      `the controller's namespace runs ${ctl.controller} controller(s) and ${ctl.host} host(s) (expected 1 and 0)`,
    );
  for (const h of c.hosts) {
    const d = await namespaceDaemons(c, h.index);
    if (d.host !== 1 || d.controller !== 0)
      problems.push(
        `host ${h.index}'s namespace runs ${d.host} host daemon(s) and ${d.controller} controller(s) (expected 1 and 0)`,
      );
  }
  const placements = await c.api().instances();
  const orderOf = new Map(placements.map((p) => [p.instance_id, p.order_id]));
  const copies = await runningCopies(c);
  problems.push(...duplicates(copies, orderOf));
  for (const [id, list] of copies) {
    const p = placements.find((x) => x.instance_id === id);
    for (const x of list) {
      const where = c.hostAt(x.host).nodeId;
      if (p === undefined || p.node_id !== where || p.state !== 'running' || !p.desired_running)
        problems.push(
          `instance ${id} runs in host ${x.host}'s namespace (pgid ${x.pgid}), but the controller says ${p === undefined ? 'nothing of it' : `${p.state} on ${p.node_id.slice(0, 8)}${p.desired_running ? '' : ' (not desired)'}`}`,
        );
    }
  }
  return problems;
}
