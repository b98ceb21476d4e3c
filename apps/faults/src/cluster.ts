// A cluster of real daemons on loopback: one controller and N hosts, each a child process with its
// own temporary home, hosts optionally behind a chaos proxy. Any daemon can be killed with SIGKILL
// and started again on the same home; teardown leaves no process behind (native workloads included,
// which run detached in their own process group and outlive their host).
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { killLogged, waitForLog } from '@heddle/cli-kit/testing';
import type { NodeView } from '@heddle/control-plane';
import { generateKeyPair, type KeyPair, toHex } from '@heddle/envelope';
import { ApiClient } from '@heddle/operator-api';
import { type ChainCheck, ChainWatch } from './chains.js';
import { ChaosProxy } from './chaos-proxy.js';
import {
  clusterRoot,
  type Daemon,
  freePort,
  killNativeProcesses,
  nativeProcesses,
  spawnControllerDaemon,
  spawnHostDaemon,
  workloadProcesses,
  writeControllerHome,
  writeHostHome,
} from './daemons.js';
import { type HostAddress, type HostListing, Observer } from './observer.js';
import { type BuiltPackage, buildPackage, type PackageKind } from './packages.js';

/** How a cluster is built. */
export interface ClusterOptions {
  /** Number of hosts (default 2). */
  readonly hosts?: number;
  /** Put every host behind a chaos proxy (the controller knows it by the proxy's URL). */
  readonly proxied?: boolean;
  /** Packages to build up front (default wasi and native). */
  readonly packages?: readonly PackageKind[];
}

/** One host of a cluster. */
export interface ClusterHost {
  readonly index: number;
  readonly nodeId: string;
  readonly publicKey: string;
  readonly config: string;
  readonly dataDir: string;
  /** Its own address (fixed across restarts). */
  readonly directUrl: string;
  /** Its chaos proxy, when proxied. */
  readonly proxy: ChaosProxy | undefined;
  /** What the controller was given: the proxy's URL, or the direct one. */
  readonly url: string;
  /** The running daemon, or undefined while it is down. */
  daemon: Daemon | undefined;
}

/** How long a daemon may take to log `listening` (generous: several clusters may start at once). */
const STARTUP_MS = 120_000;

/** Clusters starting at once (their daemons compile and load their sources: CPU heavy). */
const MAX_STARTING = 3;
let starting = 0;
const waiting: (() => void)[] = [];

async function startSlot(): Promise<() => void> {
  if (starting >= MAX_STARTING) await new Promise<void>((r) => waiting.push(r));
  starting++;
  return () => {
    starting--;
    waiting.shift()?.();
  };
}

/** A controller and its hosts as real processes (see the file comment). */
export class Cluster {
  readonly root: string;
  readonly operator: KeyPair;
  readonly observerKeys: KeyPair;
  readonly observer: Observer;
  readonly controllerHome: string;
  readonly controllerId: string;
  readonly hosts: ClusterHost[] = [];
  readonly packages: Partial<Record<PackageKind, BuiltPackage>> = {};
  readonly chains: ChainWatch = new ChainWatch();
  controller: Daemon | undefined;
  /** Orders the reset between trials ended (not held to running by later checks). */
  readonly retired: Set<string> = new Set();
  /** Daemons found dead that nobody killed (a crash is a failure of the trial it happened in). */
  readonly crashes: string[] = [];
  /** Every daemon this cluster ever started (for teardown and for failure reports). */
  readonly started: Daemon[] = [];

  protected constructor(root: string, operator: KeyPair, observerKeys: KeyPair, controllerId: string) {
    this.root = root;
    this.operator = operator;
    this.observerKeys = observerKeys;
    this.observer = new Observer(observerKeys);
    this.controllerHome = join(root, 'controller');
    this.controllerId = controllerId;
  }

  /**
   * Writes the homes, builds the packages, starts the controller and the hosts (and their proxies),
   * and adds every host to the controller (tier paired). On any failure everything started is torn
   * down before the error is thrown.
   */
  static async start(options: ClusterOptions = {}): Promise<Cluster> {
    const release = await startSlot();
    try {
      return await Cluster.#start(options);
    } finally {
      release();
    }
  }

  static async #start(options: ClusterOptions): Promise<Cluster> {
    const root = clusterRoot();
    const operator = generateKeyPair();
    const observer = generateKeyPair();
    const home = join(root, 'controller');
    const ctl = writeControllerHome(home, operator);
    const c = new Cluster(root, operator, observer, ctl.nodeId);
    try {
      for (const kind of options.packages ?? ['wasi', 'native']) {
        c.packages[kind] = await buildPackage(kind, join(root, 'packages'), operator);
      }
      for (let i = 0; i < (options.hosts ?? 2); i++) {
        const port = await freePort();
        const h = writeHostHome(join(root, `host-${i}`), {
          controllerKey: ctl.keys,
          observerKey: observer,
          operator,
          port,
        });
        const proxy = options.proxied === true ? await ChaosProxy.start(port) : undefined;
        const directUrl = `ws://127.0.0.1:${port}/`;
        c.hosts.push({
          index: i,
          nodeId: h.nodeId,
          publicKey: toHex(h.keys.publicKey),
          config: h.config,
          dataDir: h.dataDir,
          directUrl,
          proxy,
          url: proxy?.url ?? directUrl,
          daemon: undefined,
        });
      }
      await Promise.all([c.startController(), ...c.hosts.map((h) => c.startHost(h.index))]);
      const api = c.api();
      for (const h of c.hosts) await api.addNode(h.url, { tier: 'paired', key: h.publicKey });
      return c;
    } catch (err) {
      await c.teardown();
      throw err;
    }
  }

  /** A client of the controller's API as it runs now (its port changes with every start). */
  api(): ApiClient {
    return ApiClient.fromHome(this.controllerHome, { timeoutMs: 30_000 });
  }

  /** The host with `nodeId`. */
  host(nodeId: string): ClusterHost {
    const h = this.hosts.find((x) => x.nodeId === nodeId);
    if (h === undefined) throw new Error(`no host ${nodeId} in this cluster`);
    return h;
  }

  /** Host `i` (throws when there is none). */
  hostAt(i: number): ClusterHost {
    const h = this.hosts[i];
    if (h === undefined) throw new Error(`no host ${i} in this cluster`);
    return h;
  }

  /** Where the observer reaches host `i` (directly, never through its proxy). */
  address(i: number): HostAddress {
    const h = this.hostAt(i);
    return { url: h.directUrl, nodeId: h.nodeId, publicKey: h.publicKey };
  }

  /** Starts the controller daemon on its home; resolves once it listens. */
  async startController(): Promise<void> {
    if (this.controller !== undefined) throw new Error('the controller already runs');
    const d = spawnControllerDaemon(this.controllerHome, this.root);
    this.started.push(d);
    this.controller = d;
    await waitForLog(d, 'listening', STARTUP_MS);
  }

  /** Kills the controller with SIGKILL (no shutdown of any kind). */
  async killController(): Promise<void> {
    const d = this.controller;
    this.controller = undefined;
    await killLogged(d);
  }

  /** SIGKILL, then a start on the same home. */
  async restartController(): Promise<void> {
    await this.killController();
    await this.startController();
  }

  /** Starts host `i` on its home (same key, same port); resolves once it listens. */
  async startHost(i: number): Promise<void> {
    const h = this.hostAt(i);
    if (h.daemon !== undefined) throw new Error(`host ${i} already runs`);
    const d = spawnHostDaemon(h.config, this.root);
    this.started.push(d);
    h.daemon = d;
    await waitForLog(d, 'listening', STARTUP_MS);
  }

  /** Kills host `i` with SIGKILL (its native workloads keep running, as on a real machine). */
  async killHost(i: number): Promise<void> {
    const h = this.hostAt(i);
    const d = h.daemon;
    h.daemon = undefined;
    await killLogged(d);
  }

  /** SIGKILL, then a start on the same home. */
  async restartHost(i: number): Promise<void> {
    await this.killHost(i);
    await this.startHost(i);
  }

  /** Starts whatever is down (controller, hosts) and heals every proxy. */
  async ensureUp(): Promise<void> {
    const exited = (d: Daemon | undefined): boolean =>
      d !== undefined && (d.proc.exitCode !== null || d.proc.signalCode !== null);
    if (exited(this.controller)) {
      this.crashes.push(
        `the controller exited by itself (${this.controller?.proc.exitCode ?? this.controller?.proc.signalCode}): ${this.controller?.stderr.slice(-500)}`,
      );
      this.controller = undefined;
    }
    for (const h of this.hosts) {
      if (exited(h.daemon)) {
        this.crashes.push(
          `host ${h.index} exited by itself (${h.daemon?.proc.exitCode ?? h.daemon?.proc.signalCode}): ${h.daemon?.stderr.slice(-500)}`,
        );
        h.daemon = undefined;
      }
      h.proxy?.heal();
    }
    await Promise.all([
      ...(this.controller === undefined ? [this.startController()] : []),
      ...this.hosts.filter((h) => h.daemon === undefined).map((h) => this.startHost(h.index)),
    ]);
  }

  /** Host `i`'s listing, read directly with the observer key. */
  listing(i: number): Promise<HostListing> {
    return this.observer.listing(this.address(i));
  }

  /** Native workload processes alive under host `i`'s data directory (whether its host knows them or not). */
  nativePids(i: number): number[] {
    return nativeProcesses(this.hostAt(i).dataDir).map((p) => p.pid);
  }

  /** The controller as the API sees it: every node. */
  nodes(): Promise<readonly NodeView[]> {
    return this.api().nodes();
  }

  /** Verifies the controller's chain and every host's (and that none lost what it had). */
  verifyChains(): Promise<ChainCheck[]> {
    return this.chains.check([
      { name: 'controller', path: join(this.controllerHome, 'chain.jsonl') },
      ...this.hosts.map((h) => ({ name: `host ${h.index}`, path: join(h.dataDir, 'chain.jsonl') })),
    ]);
  }

  /** The last `n` log lines of every daemon running now, for failure reports. */
  recentLogs(n = 15): string {
    const parts: string[] = [];
    const show = (name: string, d: Daemon | undefined): void => {
      if (d === undefined) return;
      // The suite's own polling of the API is left out (every successful request logs a line).
      const lines = d.lines
        .filter((l) => !(l.msg === 'request' && l.status === 200))
        .slice(-n)
        .map((l) => JSON.stringify(l));
      parts.push(
        `--- ${name} (pid ${d.proc.pid}) ---\n${lines.join('\n')}${d.stderr ? `\nstderr: ${d.stderr.slice(-2000)}` : ''}`,
      );
    };
    show('controller', this.controller);
    for (const h of this.hosts) show(`host ${h.index} ${h.nodeId}`, h.daemon);
    return parts.join('\n');
  }

  /**
   * Kills every daemon this cluster started (SIGKILL), every native workload under every host's data
   * directory, closes the proxies and removes the cluster's directory (kept when `HEDDLE_FAULT_KEEP`
   * is set). Safe to call more than once.
   */
  async teardown(): Promise<void> {
    await Promise.all(this.started.map((d) => killLogged(d)));
    this.controller = undefined;
    for (const h of this.hosts) {
      h.daemon = undefined;
      killNativeProcesses(h.dataDir);
      await h.proxy?.close();
    }
    // SIGKILL is delivered asynchronously: wait (bounded) until none of them runs any more.
    const alive = (d: string): boolean => nativeProcesses(d).length > 0 || workloadProcesses(d).length > 0;
    for (let i = 0; i < 40 && this.hosts.some((h) => alive(h.dataDir)); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    // The homes go too, unless asked to keep them for a post-mortem.
    if (!process.env.HEDDLE_FAULT_KEEP) rmSync(this.root, { recursive: true, force: true });
  }
}
