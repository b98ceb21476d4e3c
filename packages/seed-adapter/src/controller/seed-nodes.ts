import { join } from 'node:path';
import type {
  OrderStorePin,
  PlacementRecord,
  PlaneContext,
  TargetRecord,
} from '@heddle/control-plane/driver';
import { sha256Hex, utf8 } from '@heddle/envelope';
import type { Capability } from '@heddle/placement';
import { type InstanceHandle, WorkloadHost } from '@heddle/runtime';
import { loadToken } from '../credentials.js';
import { SeedClient } from '../seed-client.js';
import { type SeedPin, seedPinWorkload } from '../seed-pins.js';
import { SeedApiRuntime } from '../seed-runtime.js';

/** The node id of a Seed: 32 hex of SHA-256 over a tag and its certificate pin (stable per Seed key). */
export function seedNodeId(spki: string): string {
  return sha256Hex(utf8(`heddle.seed.node\n${spki}`)).slice(0, 32);
}

const REMOTE_API: Capability = {
  id: 'runtime.remote.api',
  attrs: { vendor: 'cognitum', device: 'seed', concurrency_cap: 3, arches_native: ['armv7'] },
  provenance: 'claimed',
  state: 'available',
  exclusive: false,
};
const SEED_CLASS: Capability = {
  id: 'node.class.cognitum-seed',
  attrs: {},
  provenance: 'claimed',
  state: 'available',
  exclusive: false,
};

/** What a Seed offers the engine (the adapter's claims; a Seed signs no facts). */
export const SEED_CAPABILITIES: readonly Capability[] = Object.freeze([REMOTE_API, SEED_CLASS]);

/** The operator pin of an order (the adapter's form). */
export function seedPinOf(pin: OrderStorePin): SeedPin {
  return {
    id: pin.id,
    version: pin.version,
    ...(pin.sha256 === undefined ? {} : { sha256: pin.sha256 }),
    console_commands: [...pin.console_commands],
  };
}

/** A paired client of the Seed `t` (the token read from its file each time: a rotated token is picked up). */
export function seedClient(t: TargetRecord): SeedClient {
  const seed = t.seed;
  if (seed === undefined || seed === null) throw new TypeError(`${t.node_id} is not a Seed`);
  return new SeedClient({
    url: t.url,
    spki: seed.spki,
    token: loadToken(seed.token_file),
    allowPlainHttp: seed.allow_plain_http,
  });
}

/**
 * The controller's governed hosts for Seeds (docs/seed.md, "Under a controller"): one WorkloadHost over
 * a `SeedApiRuntime` per Seed, with the controller's gate and chain, holding the pins of every order
 * placed there. A new pin rebuilds the adapter; the instances it held are adopted again from the
 * controller's placements.
 */
export class SeedHosts {
  readonly #hosts = new Map<string, { host: WorkloadHost; pins: string }>();

  /**
   * The host for Seed `t`, with `extra` pinned besides the pins of its orders, governed at the tier
   * `t` has now.
   */
  async hostFor(ctx: PlaneContext, t: TargetRecord, extra?: OrderStorePin): Promise<WorkloadHost> {
    const pins = new Map<string, SeedPin>();
    for (const p of ctx.store.listPlacements(t.node_id)) {
      const pin = ctx.store.getOrder(p.order_id)?.store_pin;
      if (pin !== undefined && pin !== null) pins.set(`${pin.id}@${pin.version}`, seedPinOf(pin));
    }
    if (extra !== undefined) pins.set(`${extra.id}@${extra.version}`, seedPinOf(extra));
    const byId = new Map<string, SeedPin>();
    for (const p of pins.values()) byId.set(p.id, p); // one pin per cog id: the newest order wins
    const key = JSON.stringify([...byId.values()].sort((a, b) => a.id.localeCompare(b.id)));
    const held = this.#hosts.get(t.node_id);
    if (held !== undefined && held.pins === key) {
      // Governed at the Seed's tier as it is now (an operator may have added it again at another).
      held.host.setNodeTier(t.tier ?? t.assigned_tier);
      return held.host;
    }
    const host = new WorkloadHost({
      runtime: new SeedApiRuntime({ api: seedClient(t), pins: [...byId.values()], nodeId: t.node_id }),
      gate: ctx.gate,
      recorder: ctx.chain,
      agent: ctx.nodeId,
      nodeTier: t.tier ?? t.assigned_tier,
    });
    this.#hosts.set(t.node_id, { host, pins: key });
    for (const p of ctx.store.listPlacements(t.node_id)) {
      if (p.state === 'unloaded' || p.state === 'lost') continue;
      const pin = ctx.store.getOrder(p.order_id)?.store_pin;
      if (pin === undefined || pin === null || byId.get(pin.id)?.version !== pin.version) continue;
      await host.adopt(seedHandle(p), seedPinWorkload(seedPinOf(pin))).catch(() => undefined);
    }
    return host;
  }

  /** Forgets the host of a Seed (removed, or its pin changed). */
  forget(nodeId: string): void {
    this.#hosts.delete(nodeId);
  }
}

/** The variant recorded for a Seed placement: whether this controller's adapter installed the cog. */
export function seedVariant(storeInstalled: boolean): string {
  return storeInstalled ? 'store-pin-installed' : 'store-pin';
}

/** The instance handle of a Seed placement (`storeInstalled` from its recorded variant). */
export function seedHandle(p: PlacementRecord): InstanceHandle {
  return {
    instanceId: p.instance_id,
    runtime: p.runtime,
    workloadId: p.workload,
    version: p.version,
    storeInstalled: p.variant === seedVariant(true),
  };
}

/** Where a Seed instance's (unused) data directory is said to be: the Seed keeps its own data. */
export function seedDataDir(stateDir: string, nodeId: string): string {
  return join(stateDir, 'seeds', nodeId);
}
