// The network of a namespace cluster: a private bridge in the root namespace (`hb<tag>`, address
// 10.213.<subnet>.254, where the test process reaches every daemon), one network namespace per daemon
// (`hdl-<tag>-c` for the controller, `hdl-<tag>-h<i>` for host i), each joined to the bridge by a veth
// pair (`hv<tag><role>` in the root namespace, `eth0` inside) with an address of its own. Faults act on
// it in two ways: the state of a daemon's link (`ip link set hv... down`: its cable pulled) and input
// drop rules of nftables inside a namespace (packets from given addresses vanish on arrival: silence,
// never a reset). Both are reference-counted so that faults compose.
import { readdirSync, statSync } from 'node:fs';
import { claimSubnet, newRunTag, reapStale, register, release, removeRun } from './registry.js';
import { inNs, netnsSupport, sh } from './sys.js';

/** The role of a namespace: the controller, or host `i`. */
export type Role = 'controller' | number;

/** Where the operator API of the controller listens inside its namespace (loopback only, as always). */
export const API_PORT = 7070;
/** Where every host listens, on its own address. */
export const HOST_PORT = 7100;

/** The private network of one cluster (see the file comment). */
export class Fabric {
  readonly tag: string;
  readonly subnet: number;
  readonly hosts: number;
  readonly bridge: string;
  /** Links (root-side veth names) set down, with how many faults hold each down. */
  readonly #down = new Map<string, number>();
  /** Per namespace: source address -> how many faults drop it. */
  readonly #drops = new Map<string, Map<string, number>>();
  #destroyed = false;

  private constructor(tag: string, subnet: number, hosts: number) {
    this.tag = tag;
    this.subnet = subnet;
    this.hosts = hosts;
    this.bridge = `hb${tag}`;
  }

  /**
   * Makes the bridge, the controller's namespace and `hosts` host namespaces, all linked and
   * addressed. Reaps what dead runs left first. Throws when namespaces cannot be made (see
   * `netnsSupport`); on a failure half way everything made is removed.
   */
  static async create(hosts: number): Promise<Fabric> {
    const s = netnsSupport();
    if (!s.ok) throw new Error(`cannot build a namespace cluster: ${s.reason}`);
    if (!Number.isSafeInteger(hosts) || hosts < 1 || hosts > 200) throw new RangeError('hosts: 1..200');
    reapStale();
    const tag = newRunTag();
    register(tag);
    const f = new Fabric(tag, claimSubnet(tag), hosts);
    try {
      await sh(['ip', 'link', 'add', f.bridge, 'type', 'bridge']);
      await sh(['ip', 'addr', 'add', `${f.rootIp}/24`, 'dev', f.bridge]);
      await sh(['ip', 'link', 'set', f.bridge, 'up']);
      const roles: Role[] = ['controller', ...Array.from({ length: hosts }, (_, i) => i)];
      for (const r of roles) await f.#addNamespace(r);
      return f;
    } catch (err) {
      f.destroySync();
      throw err;
    }
  }

  async #addNamespace(role: Role): Promise<void> {
    const ns = this.ns(role);
    const link = this.link(role);
    await sh(['ip', 'netns', 'add', ns]);
    await sh(['ip', 'link', 'add', link, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
    await sh(['ip', 'link', 'set', link, 'master', this.bridge]);
    await sh(['ip', 'link', 'set', link, 'up']);
    await sh(['ip', '-n', ns, 'addr', 'add', `${this.ip(role)}/24`, 'dev', 'eth0']);
    await sh(['ip', '-n', ns, 'link', 'set', 'eth0', 'up']);
    await sh(['ip', '-n', ns, 'link', 'set', 'lo', 'up']);
  }

  /** The namespace of `role`. */
  ns(role: Role): string {
    return `hdl-${this.tag}-${role === 'controller' ? 'c' : `h${role}`}`;
  }

  /** The root-side veth of `role` (its "cable"). */
  link(role: Role): string {
    return `hv${this.tag}${role === 'controller' ? 'c' : role.toString(36).padStart(2, '0')}`;
  }

  /** The address of `role`. */
  ip(role: Role): string {
    return `10.213.${this.subnet}.${role === 'controller' ? 1 : 10 + role}`;
  }

  /** The root namespace's address on the bridge (where the test process talks from). */
  get rootIp(): string {
    return `10.213.${this.subnet}.254`;
  }

  /** Every namespace of the fabric. */
  namespaces(): string[] {
    return [this.ns('controller'), ...Array.from({ length: this.hosts }, (_, i) => this.ns(i))];
  }

  /** Pulls the cable of `role` (reference-counted: it comes back once every puller plugged it in). */
  async linkDown(role: Role): Promise<void> {
    const l = this.link(role);
    const n = this.#down.get(l) ?? 0;
    this.#down.set(l, n + 1);
    if (n === 0) await sh(['ip', 'link', 'set', l, 'down']);
  }

  /** Undoes one {@link linkDown}. */
  async linkUp(role: Role): Promise<void> {
    const l = this.link(role);
    const n = this.#down.get(l) ?? 0;
    if (n <= 1) {
      this.#down.delete(l);
      await sh(['ip', 'link', 'set', l, 'up']);
    } else this.#down.set(l, n - 1);
  }

  /** Whether the cable of `role` is pulled now. */
  isDown(role: Role): boolean {
    return (this.#down.get(this.link(role)) ?? 0) > 0;
  }

  /** Packets from `from` arriving in the namespace of `at` are dropped (silently), until {@link undrop}. */
  async drop(at: Role, from: readonly Role[]): Promise<void> {
    const ns = this.ns(at);
    const m = this.#drops.get(ns) ?? new Map<string, number>();
    this.#drops.set(ns, m);
    for (const r of from) m.set(this.ip(r), (m.get(this.ip(r)) ?? 0) + 1);
    await this.#render(ns);
  }

  /** Undoes one {@link drop} of the same arguments. */
  async undrop(at: Role, from: readonly Role[]): Promise<void> {
    const ns = this.ns(at);
    const m = this.#drops.get(ns);
    if (m === undefined) return;
    for (const r of from) {
      const n = (m.get(this.ip(r)) ?? 0) - 1;
      if (n <= 0) m.delete(this.ip(r));
      else m.set(this.ip(r), n);
    }
    await this.#render(ns);
  }

  /** Source addresses dropped in `at`'s namespace now. */
  dropped(at: Role): string[] {
    return [...(this.#drops.get(this.ns(at))?.keys() ?? [])];
  }

  /** Replaces the namespace's `inet heddle` table with the current drop set (one atomic nft run). */
  async #render(ns: string): Promise<void> {
    const addrs = [...(this.#drops.get(ns)?.keys() ?? [])];
    const rule = addrs.length === 0 ? '' : `    ip saddr { ${addrs.join(', ')} } drop\n`;
    const script = `table inet heddle\ndelete table inet heddle\ntable inet heddle {\n  chain input {\n    type filter hook input priority 0; policy accept;\n${rule}  }\n}\n`;
    await inNs(ns, ['nft', '-f', '-'], script);
  }

  /** The pids inside the namespace of `role` (`ip netns pids`). */
  async pids(role: Role): Promise<number[]> {
    const out = await sh(['ip', 'netns', 'pids', this.ns(role)]);
    return out
      .split('\n')
      .map((l) => Number(l.trim()))
      .filter((n) => Number.isSafeInteger(n) && n > 0);
  }

  /**
   * Every process in each host namespace, from one scan of /proc: a process is in the namespace whose
   * `/run/netns/<name>` has the inode of its `/proc/<pid>/ns/net` (what `ip netns pids` does, without
   * a process per namespace: the duplicate sampler reads this several times a second).
   */
  hostPids(): Map<number, number[]> {
    const byIno = new Map<number, number>();
    for (let i = 0; i < this.hosts; i++) {
      try {
        byIno.set(statSync(`/run/netns/${this.ns(i)}`).ino, i);
      } catch {
        // removed meanwhile (teardown)
      }
    }
    const out = new Map<number, number[]>();
    let names: string[] = [];
    try {
      names = readdirSync('/proc').filter((n) => /^\d+$/.test(n));
    } catch {
      return out;
    }
    for (const n of names) {
      let ino: number;
      try {
        ino = statSync(`/proc/${n}/ns/net`).ino;
      } catch {
        continue; // gone meanwhile
      }
      const host = byIno.get(ino);
      if (host === undefined) continue;
      out.set(host, [...(out.get(host) ?? []), Number(n)]);
    }
    return out;
  }

  /** Removes every namespace (killing what runs inside), link and claim of this fabric. Idempotent. */
  destroySync(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    removeRun(this.tag);
    release(this.tag);
  }
}
