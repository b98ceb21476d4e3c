import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  fromHex,
  type KeyPair,
  keyPairFromSecret,
  makeDirs,
  sha256,
  toHex,
  writeFileAtomic,
} from '@heddle/envelope';
import { HollowError } from './errors.js';
import { HollowHost, type HollowShared } from './hollow-host.js';

/** The fleet's secret under its directory: every host's key is derived from it and the host's index. */
export const FLEET_SECRET_FILE = 'fleet.secret';

/** The list of hosts a fleet writes once it listens (`{ hosts: [{ index, node_id, public_key, url }] }`). */
export const HOSTS_FILE = 'hosts.json';

/** One line of {@link HOSTS_FILE}: what enrolment needs. */
export interface HollowHostEntry {
  readonly index: number;
  readonly node_id: string;
  readonly public_key: string;
  readonly url: string;
}

/** Options of {@link HollowFleet.start}. */
export interface HollowFleetOptions extends HollowShared {
  /** The fleet's directory (created mode 0700): its secret, `hosts.json` and one directory per host. */
  readonly dir: string;
  /** How many hosts (1 to 20,000). */
  readonly count: number;
  /** Hosts started at once (default 64). */
  readonly concurrency?: number;
}

const SECRET_HEX = /^[0-9a-f]{64}$/;

/**
 * Reads the fleet's secret, or creates it (32 random bytes, hex, mode 0600) on a first start. The
 * key of host `i` is derived from it, so a fleet started again in the same directory has the same
 * node ids: its hosts come back as the nodes the controller knows.
 */
export function fleetSecret(dir: string): Uint8Array {
  const path = join(dir, FLEET_SECRET_FILE);
  if (existsSync(path)) {
    const text = readFileSync(path, 'utf8').trim();
    if (!SECRET_HEX.test(text)) {
      throw new HollowError('fleet_secret_invalid', `${path}: expected 64 hex characters`, 'dir');
    }
    return fromHex(text);
  }
  const secret = new Uint8Array(randomBytes(32));
  writeFileAtomic(path, `${toHex(secret)}\n`, { mode: 0o600 });
  return secret;
}

/** The key of host `index`: Ed25519 from SHA-256(secret ‖ "heddle-hollow-host" ‖ index as 4 bytes, big endian). */
export function hollowHostKeys(secret: Uint8Array, index: number): KeyPair {
  const tag = new TextEncoder().encode('heddle-hollow-host');
  const input = new Uint8Array(secret.length + tag.length + 4);
  input.set(secret, 0);
  input.set(tag, secret.length);
  new DataView(input.buffer).setUint32(secret.length + tag.length, index);
  return keyPairFromSecret(sha256(input));
}

/**
 * Many hollow hosts in one process (docs/hollow.md), each with its own key, directory, chain, nonce
 * journal, `HostService` and WebSocket server on its own port. {@link kill} ends some of them as a
 * power loss would and {@link revive} starts them again on the same port with the same key.
 */
export class HollowFleet {
  readonly #options: HollowFleetOptions;
  readonly #secret: Uint8Array;
  readonly #hosts: HollowHost[];

  private constructor(options: HollowFleetOptions, secret: Uint8Array, hosts: HollowHost[]) {
    this.#options = options;
    this.#secret = secret;
    this.#hosts = hosts;
  }

  /** Starts `count` hosts and writes `hosts.json`. Hosts already started are stopped if one fails. */
  static async start(options: HollowFleetOptions): Promise<HollowFleet> {
    if (!Number.isSafeInteger(options.count) || options.count < 1 || options.count > 20_000) {
      throw new HollowError('invalid_count', `count: expected 1 to 20000, got ${options.count}`, 'count');
    }
    makeDirs(options.dir, 0o700);
    const secret = fleetSecret(options.dir);
    const hosts = new Array<HollowHost>(options.count);
    const fleet = new HollowFleet(options, secret, hosts);
    try {
      await bounded(options.count, options.concurrency ?? 64, async (i) => {
        hosts[i] = await fleet.#startHost(i, 0);
      });
    } catch (err) {
      await Promise.all(hosts.filter((h) => h !== undefined).map((h) => h.kill()));
      throw err;
    }
    fleet.#writeHostsFile();
    return fleet;
  }

  /** The hosts, by index (a killed host stays at its index until revived). */
  get hosts(): readonly HollowHost[] {
    return this.#hosts;
  }

  /** What enrolment needs of every host. */
  entries(): HollowHostEntry[] {
    return this.#hosts.map((h) => ({
      index: h.index,
      node_id: h.nodeId,
      public_key: h.publicKey,
      url: h.url,
    }));
  }

  /** Host `i`, or `unknown_host`. */
  host(i: number): HollowHost {
    const h = this.#hosts[i];
    if (h === undefined)
      throw new HollowError('unknown_host', `no host ${i} (0 to ${this.#hosts.length - 1})`, 'index');
    return h;
  }

  /** Kills hosts (as a power loss: see `HollowHost.kill`), all at once. */
  async kill(indices: readonly number[]): Promise<void> {
    const hosts = indices.map((i) => this.host(i));
    await Promise.all(hosts.map((h) => h.kill()));
  }

  /** Starts killed hosts again: the same key, directory and port; their simulated instances are lost. */
  async revive(indices: readonly number[]): Promise<void> {
    const dead = indices.map((i) => this.host(i)).filter((h) => h.dead);
    await bounded(dead.length, this.#options.concurrency ?? 64, async (k) => {
      // cast: k < dead.length
      const old = dead[k] as HollowHost;
      this.#hosts[old.index] = await this.#startHost(old.index, old.port);
    });
  }

  /** Counts: hosts alive, instances held, starts failed on purpose. */
  stats(): { hosts: number; alive: number; instances: number; failed_starts: number } {
    let alive = 0;
    let instances = 0;
    let failed = 0;
    for (const h of this.#hosts) {
      if (!h.dead) alive++;
      for (const r of h.runtimes) {
        instances += r.size;
        failed += r.failedStarts;
      }
    }
    return { hosts: this.#hosts.length, alive, instances, failed_starts: failed };
  }

  /** Stops every live host gracefully. */
  async stop(): Promise<void> {
    await bounded(this.#hosts.length, 256, async (i) => {
      await this.#hosts[i]?.stop();
    });
  }

  #startHost(index: number, port: number): Promise<HollowHost> {
    const dir = join(this.#options.dir, 'hosts', String(index));
    makeDirs(dir, 0o700);
    return HollowHost.start({ index, keys: hollowHostKeys(this.#secret, index), dir, port }, this.#options);
  }

  #writeHostsFile(): void {
    writeFileAtomic(join(this.#options.dir, HOSTS_FILE), `${JSON.stringify({ hosts: this.entries() })}\n`);
  }
}

/** Runs `fn(0..n-1)`, at most `concurrency` at a time; rejects with the first failure. */
async function bounded(n: number, concurrency: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < n) await fn(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
}
