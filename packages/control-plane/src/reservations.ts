import { PlacementState, type PlacementView } from '@heddle/placement';
import type { PlacementRecord } from './state-store.js';

/** What a place in flight claims on a node: the instance the node will derive and the order it serves. */
export interface ClaimTarget {
  readonly node_id: string;
  /** The instance id the node derives for this place (see `expectedInstanceId`). */
  readonly instance_id: string;
}

/** What a claim reserves: the workload and its resources. */
export interface ClaimSpec {
  readonly order_id: string;
  /** The order's instance identity (see `instanceIdentity`): what its instance id derives from besides the node. */
  readonly identity: string;
  readonly workload: string;
  readonly package_id: string;
  readonly memoryMb: number;
  readonly cpuPct: number;
}

/**
 * A place in flight (issue 15 items 8 and 9): from the moment its decision is taken (synchronously,
 * before anything is awaited) until its answer is recorded, it holds the resources of its current
 * candidate node in the engine's state and claims the instance id that node will derive, so that
 * concurrent decisions see it.
 */
export interface PlaceClaim {
  /** The node currently claimed, or undefined once released. */
  readonly target: ClaimTarget | undefined;
  /**
   * The claim's row in the shared state (`place_claims`, see `claimShared`) while the place is not
   * sent; undefined for a claim held in memory only.
   */
  readonly claimId?: string | undefined;
  /** The place was sent: its unsettled record (written before the claim row was removed) holds the room now. */
  sent?(): void;
  /**
   * Moves the claim to another candidate (a fallback after a safe failure). Returns undefined when it
   * holds there, or why it cannot: the node no longer has room (`view` checks it) or another order
   * holds or is placing the same instance there. On failure nothing is held.
   */
  move(target: ClaimTarget, view: PlacementView): string | undefined;
  /** The place answered with `instanceId`: the reservation becomes that instance's. */
  placed(instanceId: string): void;
  /** The answer was lost: the reservation stays, under the unsettled decision (released by {@link Reservations.settled}). */
  unsettled(decisionId: string): void;
  /** Releases what the claim holds (the place failed or was refused). Idempotent. */
  release(): void;
}

interface Held {
  readonly reservationId: string;
  /** The instance identity (`instanceIdentity`), or `?<package id>` when not known. */
  readonly identity: string;
  readonly node_id: string;
  readonly instance_id: string;
  readonly order_id: string;
  readonly package_id: string;
}

/** Who holds an instance id of a package on a node: a live placement, a place in flight, an unsettled decision. */
export interface Holder {
  readonly kind: 'instance' | 'claim' | 'unsettled';
  readonly node_id: string;
  readonly instance_id: string;
  readonly order_id: string;
}

/**
 * Resource reservations, so that the engine sees what the controller already placed, what it is
 * placing right now and what it placed with an answer it lost: per live instance (rebuilt from the
 * store on open), per place in flight ({@link PlaceClaim}) and per unsettled decision.
 */
export class Reservations {
  readonly state: PlacementState = new PlacementState();
  /** The operator labels of a node, recorded with each reservation (the engine's spread counts). */
  readonly #labels: (nodeId: string) => Readonly<Record<string, string>> | undefined;

  /** `labels`: a node's operator labels (default none), kept with each reservation for spread. */
  constructor(labels: (nodeId: string) => Readonly<Record<string, string>> | undefined = () => undefined) {
    this.#labels = labels;
  }

  /** `labels` of `nodeId` as a reservation field (none when it has none). */
  #labelsOf(nodeId: string): { labels?: Readonly<Record<string, string>> } {
    const labels = this.#labels(nodeId);
    return labels === undefined || Object.keys(labels).length === 0 ? {} : { labels };
  }
  /** Key (instance id, `claim:<n>` or `unsettled:<decision id>`) to what it holds. */
  readonly #held = new Map<string, Held>();
  /** Instance id to the keys of claims and unsettled decisions holding it (not its own placement's). */
  readonly #claimed = new Map<string, Set<string>>();
  /** Instance identity to the keys holding one of its instances. */
  readonly #byIdentity = new Map<string, Set<string>>();
  #claims = 0;

  /** Reserves `memory_mb` and `cpu_pct` for `p` on its node (once per instance). */
  hold(
    p: Pick<PlacementRecord, 'instance_id' | 'node_id' | 'workload' | 'package_id'> & {
      order_id?: string;
      identity?: string | undefined;
    },
    memoryMb: number,
    cpuPct: number,
  ): void {
    if (this.#held.has(p.instance_id)) return;
    this.#reserve(
      p.instance_id,
      { ...p, order_id: p.order_id ?? '', identity: p.identity ?? `?${p.package_id}` },
      memoryMb,
      cpuPct,
    );
  }

  /** Reserves for an unsettled decision (after a restart: its answer may have placed it). */
  holdUnsettled(
    decisionId: string,
    p: ClaimTarget & {
      readonly order_id: string;
      readonly workload: string;
      readonly package_id: string;
      readonly identity: string;
    },
    memoryMb: number,
    cpuPct: number,
  ): void {
    const key = `unsettled:${decisionId}`;
    if (!this.#held.has(key)) this.#reserve(key, p, memoryMb, cpuPct);
  }

  /** An unsettled decision was settled: what it held is released (a placement holds its own). */
  settled(decisionId: string): void {
    this.release(`unsettled:${decisionId}`);
  }

  /** Releases what `key` (an instance id) held. */
  release(key: string): void {
    const h = this.#held.get(key);
    if (h === undefined) return;
    this.state.release(h.reservationId);
    this.#held.delete(key);
    this.#unindex(key, h);
  }

  /**
   * Who else holds or is placing `instanceId` on its node: the order id of a place in flight or an
   * unsettled decision that claims it (`except` the claim asking), or undefined.
   */
  claimant(instanceId: string, except?: string): { order_id: string; in_flight: boolean } | undefined {
    for (const key of this.#claimed.get(instanceId) ?? []) {
      const h = this.#held.get(key);
      if (key === except || h === undefined) continue;
      return { order_id: h.order_id, in_flight: key.startsWith('claim:') };
    }
    return undefined;
  }

  /**
   * Everything that may hold the instance of identity `identity` (see `instanceIdentity`) of package
   * `packageId` on some node: the live placements, places in flight and unsettled decisions of that
   * identity, and those of the package whose identity is not known. Those of other identities are
   * never looked at, so the cost follows the few that may match, not the package's instance count.
   */
  *holders(packageId: string, identity: string): IterableIterator<Holder> {
    yield* this.#holdersOf(identity);
    yield* this.#holdersOf(`?${packageId}`);
  }

  *#holdersOf(identity: string): IterableIterator<Holder> {
    for (const key of this.#byIdentity.get(identity) ?? []) {
      const h = this.#held.get(key);
      if (h === undefined) continue;
      const kind = key.startsWith('claim:')
        ? 'claim'
        : key.startsWith('unsettled:')
          ? 'unsettled'
          : 'instance';
      yield { kind, node_id: h.node_id, instance_id: h.instance_id, order_id: h.order_id };
    }
  }

  /**
   * Claims `target` for a place in flight (see {@link PlaceClaim}); the engine's decision already
   * judged that it fits, so no capacity check is made here.
   */
  claim(target: ClaimTarget, spec: ClaimSpec): PlaceClaim {
    const key = `claim:${++this.#claims}`;
    const self = this;
    let current: ClaimTarget | undefined = target;
    this.#reserve(
      key,
      {
        ...target,
        order_id: spec.order_id,
        workload: spec.workload,
        package_id: spec.package_id,
        identity: spec.identity,
      },
      spec.memoryMb,
      spec.cpuPct,
    );
    const rekey = (to: string): void => {
      const h = self.#held.get(key);
      if (h === undefined) return;
      self.#held.delete(key);
      self.#unindex(key, h);
      if (self.#held.has(to)) self.state.release(h.reservationId);
      else self.#set(to, h);
      current = undefined;
    };
    return {
      get target() {
        return current;
      },
      move(next, view) {
        self.release(key);
        current = undefined;
        const other = self.claimant(next.instance_id, key);
        if (other !== undefined)
          return `order ${other.order_id} ${other.in_flight ? 'is placing' : 'may have placed'} the same instance ${next.instance_id} there`;
        try {
          const r = self.state.reserve(
            {
              node_id: next.node_id,
              workload: spec.workload,
              package_id: spec.package_id,
              memory_mb: spec.memoryMb,
              cpu_pct: spec.cpuPct,
              ...self.#labelsOf(next.node_id),
            },
            view,
          );
          self.#set(key, {
            reservationId: r.id,
            identity: spec.identity,
            node_id: next.node_id,
            instance_id: next.instance_id,
            order_id: spec.order_id,
            package_id: spec.package_id,
          });
          current = next;
          return undefined;
        } catch (err) {
          return `no longer fits: ${err instanceof Error ? err.message : String(err)}`;
        }
      },
      placed(instanceId) {
        rekey(instanceId);
      },
      unsettled(decisionId) {
        rekey(`unsettled:${decisionId}`);
      },
      release() {
        self.release(key);
        current = undefined;
      },
    };
  }

  #reserve(
    key: string,
    p: ClaimTarget & {
      readonly order_id: string;
      readonly workload: string;
      readonly package_id: string;
      readonly identity: string;
    },
    memoryMb: number,
    cpuPct: number,
  ): void {
    const r = this.state.reserve({
      node_id: p.node_id,
      workload: p.workload,
      package_id: p.package_id,
      memory_mb: memoryMb,
      cpu_pct: cpuPct,
      ...this.#labelsOf(p.node_id),
    });
    this.#set(key, {
      reservationId: r.id,
      identity: p.identity,
      node_id: p.node_id,
      instance_id: p.instance_id,
      order_id: p.order_id,
      package_id: p.package_id,
    });
  }

  #set(key: string, h: Held): void {
    this.#held.set(key, h);
    let same = this.#byIdentity.get(h.identity);
    if (same === undefined) {
      same = new Set();
      this.#byIdentity.set(h.identity, same);
    }
    same.add(key);
    if (key === h.instance_id) return;
    let keys = this.#claimed.get(h.instance_id);
    if (keys === undefined) {
      keys = new Set();
      this.#claimed.set(h.instance_id, keys);
    }
    keys.add(key);
  }

  #unindex(key: string, h: Held): void {
    const same = this.#byIdentity.get(h.identity);
    same?.delete(key);
    if (same?.size === 0) this.#byIdentity.delete(h.identity);
    const keys = this.#claimed.get(h.instance_id);
    if (keys === undefined) return;
    keys.delete(key);
    if (keys.size === 0) this.#claimed.delete(h.instance_id);
  }
}
