// A cluster of real daemons on a real network: the controller and each host in a network namespace
// of its own (fabric.ts), run from the built apps (`apps/*/dist/bin.js`) with `ip netns exec`. The
// controller reaches host i through the relay in its namespace (`ws://127.0.0.1:<8000+i>/`, where
// latency and loss are added), the test process reaches the operator API through the same relay
// (`<controller address>:7071`) and every host directly at its own address (`ws://<addr>:7100/`).
// It is a `Cluster`, so the trial kit, the convergence check and the reset work on it unchanged.
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type LoggedProcess, spawnLogged, waitForLog } from '@heddle/cli-kit/testing';
import { generateKeyPair, toHex } from '@heddle/envelope';
import { ApiClient } from '@heddle/operator-api';
import { Cluster } from '../cluster.js';
import { clusterRoot, writeControllerHome, writeHostHome } from '../daemons.js';
import { buildPackage, type PackageKind } from '../packages.js';
import { API_PORT, Fabric, HOST_PORT } from './fabric.js';
import { faketimeEnv } from './faketime.js';
import { Relay } from './relay.js';

const APPS = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..', '..');

/** The port of the API relay on the controller's address. */
export const API_RELAY_PORT = 7071;
/** The relay port of host i in the controller's namespace is this plus i. */
export const HOST_RELAY_BASE = 8000;

/** How a namespace cluster is built. */
export interface NetClusterOptions {
  /** Number of hosts (default 3). */
  readonly hosts?: number;
  /** Packages to build up front (default wasi and native). */
  readonly packages?: readonly PackageKind[];
  /** The controller's `lifecycle.dead_after_secs` (default 6). */
  readonly deadAfterSecs?: number;
  /** Every host's `controller_lease_secs` (default: none, the lease is off). */
  readonly leaseSecs?: number;
  /** Run every host under libfaketime, its clock set by `clockFile(i)` (the clock kinds: faketime.ts). */
  readonly faketime?: boolean;
}

const STARTUP_MS = 120_000;

function patchJson(path: string, change: (o: Record<string, unknown>) => void): void {
  // cast: a configuration file this harness wrote itself a moment ago.
  const o = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  change(o);
  writeFileSync(path, JSON.stringify(o, null, 2));
}

/** Where a built app's entry is; throws a clear error when the apps are not built. */
function builtBin(app: 'controller' | 'host'): string {
  const bin = join(APPS, app, 'dist', 'bin.js');
  try {
    readFileSync(bin);
  } catch {
    throw new Error(`${bin} is missing: build the apps first (node scripts/pnpm.mjs exec turbo run build)`);
  }
  return bin;
}

/** A controller and hosts in namespaces (see the file comment). */
export class NetCluster extends Cluster {
  readonly fabric: Fabric;
  readonly relay: Relay;
  readonly leaseSecs: number | undefined;
  readonly deadAfterSecs: number;
  /** Whether the hosts run under libfaketime (see `clockFile`). */
  readonly faketime: boolean;
  readonly #token: string;

  private constructor(
    base: {
      root: string;
      operator: ReturnType<typeof generateKeyPair>;
      observer: ReturnType<typeof generateKeyPair>;
      controllerId: string;
    },
    fabric: Fabric,
    relay: Relay,
    o: { leaseSecs: number | undefined; deadAfterSecs: number; faketime?: boolean | undefined },
  ) {
    super(base.root, base.operator, base.observer, base.controllerId);
    this.fabric = fabric;
    this.relay = relay;
    this.leaseSecs = o.leaseSecs;
    this.deadAfterSecs = o.deadAfterSecs;
    this.faketime = o.faketime === true;
    this.#token = readFileSync(join(this.controllerHome, 'api.token'), 'utf8').trim();
  }

  /** Builds the fabric, the homes and the packages, starts every daemon, adds every host. */
  static async startNet(options: NetClusterOptions = {}): Promise<NetCluster> {
    const n = options.hosts ?? 3;
    const fabric = await Fabric.create(n);
    let relay: Relay | undefined;
    let c: NetCluster | undefined;
    try {
      relay = await Relay.start(fabric.ns('controller'));
      const root = clusterRoot();
      const operator = generateKeyPair();
      const observer = generateKeyPair();
      const home = join(root, 'controller');
      const ctl = writeControllerHome(home, operator);
      const deadAfterSecs = options.deadAfterSecs ?? 6;
      patchJson(join(home, 'controller.json'), (o) => {
        o.api = { host: '127.0.0.1', port: API_PORT };
        const lifecycle = typeof o.lifecycle === 'object' && o.lifecycle !== null ? o.lifecycle : {};
        o.lifecycle = { ...lifecycle, dead_after_secs: deadAfterSecs };
      });
      c = new NetCluster({ root, operator, observer, controllerId: ctl.nodeId }, fabric, relay, {
        leaseSecs: options.leaseSecs,
        deadAfterSecs,
        faketime: options.faketime,
      });
      for (const kind of options.packages ?? ['wasi', 'native']) {
        c.packages[kind] = await buildPackage(kind, join(root, 'packages'), operator);
      }
      await relay.listen('api', fabric.ip('controller'), API_RELAY_PORT, `127.0.0.1:${API_PORT}`);
      for (let i = 0; i < n; i++) {
        const h = writeHostHome(join(root, `host-${i}`), {
          controllerKey: ctl.keys,
          observerKey: observer,
          operator,
          port: HOST_PORT,
        });
        patchJson(h.config, (o) => {
          o.listen = { host: fabric.ip(i), port: HOST_PORT };
          if (options.leaseSecs !== undefined) o.controller_lease_secs = options.leaseSecs;
        });
        const relayPort = await relay.listen(
          `h${i}`,
          '127.0.0.1',
          HOST_RELAY_BASE + i,
          `${fabric.ip(i)}:${HOST_PORT}`,
        );
        c.hosts.push({
          index: i,
          nodeId: h.nodeId,
          publicKey: toHex(h.keys.publicKey),
          config: h.config,
          dataDir: h.dataDir,
          directUrl: `ws://${fabric.ip(i)}:${HOST_PORT}/`,
          proxy: undefined,
          url: `ws://127.0.0.1:${relayPort}/`,
          daemon: undefined,
        });
      }
      await Promise.all([c.startController(), ...c.hosts.map((h) => c?.startHost(h.index))]);
      const api = c.api();
      for (const h of c.hosts) await api.addNode(h.url, { tier: 'paired', key: h.publicKey });
      return c;
    } catch (err) {
      if (c !== undefined) await c.teardown();
      else {
        await relay?.close();
        fabric.destroySync();
      }
      throw err;
    }
  }

  #spawn(role: 'controller' | number, args: readonly string[]): LoggedProcess {
    const bin = builtBin(role === 'controller' ? 'controller' : 'host');
    return spawnLogged('ip', ['netns', 'exec', this.fabric.ns(role), process.execPath, bin, ...args], {
      cwd: this.root,
      ...(role !== 'controller' && this.faketime ? { env: faketimeEnv(this.clockFile(role)) } : {}),
    });
  }

  /** The file host `i`'s clock offset is read from when the hosts run under libfaketime. */
  clockFile(i: number): string {
    return join(this.root, `host-${i}.faketime`);
  }

  override async startController(): Promise<void> {
    if (this.controller !== undefined) throw new Error('the controller already runs');
    const d = this.#spawn('controller', ['controller', 'run', '--home', this.controllerHome]);
    this.started.push(d);
    this.controller = d;
    await waitForLog(d, 'listening', STARTUP_MS);
  }

  override async startHost(i: number): Promise<void> {
    const h = this.hostAt(i);
    if (h.daemon !== undefined) throw new Error(`host ${i} already runs`);
    const d = this.#spawn(i, ['run', '--config', h.config]);
    this.started.push(d);
    h.daemon = d;
    await waitForLog(d, 'listening', STARTUP_MS);
  }

  /** The operator API through the relay on the controller's address. */
  override api(): ApiClient {
    return new ApiClient({
      url: `http://${this.fabric.ip('controller')}:${API_RELAY_PORT}`,
      token: this.#token,
      timeoutMs: 30_000,
    });
  }

  /** Everything the cluster made goes: daemons, workloads, the relay, the namespaces, the links. */
  override async teardown(): Promise<void> {
    await super.teardown();
    await this.relay.close();
    this.fabric.destroySync();
  }
}
