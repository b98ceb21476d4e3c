import { isHex, nodeIdFromPublicKey, toHex } from '@heddle/envelope';
import { isGone, type NodeTier } from '@heddle/model';
import { NodeFactsCache, PlacementError, type SignedNodeFacts, verifyNodeFacts } from '@heddle/placement';
import {
  CallFailure,
  type ClockOffset,
  clockOffset,
  type DescribeAnswer,
  type HostFeature,
  HostSoftwareSchema,
  hostClockFromReason,
  ProtocolError,
  ResponseError,
} from '@heddle/protocol';
import type { Caller } from './caller.js';
import type { PlaneConfig } from './config.js';
import { PlaneError } from './errors.js';
import { CheckedLiveness, withDeadline } from './health.js';
import type { HostSoftwareRecord, PlacementRecord, StateStore, TargetRecord } from './state-store.js';

/** How to add a node. */
export interface AddNodeOptions {
  /** The operator-assigned tier. */
  readonly tier: NodeTier;
  /** The key (64 hex) to require; without it, the key that answers is trusted on first use. */
  readonly key?: string | undefined;
}

/** What a describe said: the responder's key, its verified facts and its advertised routes. */
interface Described {
  readonly publicKey: string;
  readonly nodeId: string;
  readonly facts: SignedNodeFacts;
  readonly routes: string[];
  /** The software it reports (`advertisement.software`), or null when it reports none that fits. */
  readonly software: HostSoftwareRecord | null;
  /** Its advertised lease plus the time it takes to stop its instances after it (ms), or null. */
  readonly leaseMs: number | null;
  /** Its clock offset, measured from the answer's `clock_ms`, or undefined when it gave none. */
  readonly clock: ClockOffset | undefined;
}

/** A node's clock offset as this controller last measured it (memory only). */
export interface ClockReading extends ClockOffset {
  /** When it was measured (Unix ms, this clock). */
  readonly measured_at_ms: number;
  /** True when it came from a time-window refusal (`expired`): the host refuses signed requests. */
  readonly refused: boolean;
}

const URL_RE = /^wss?:\/\/[^\s/?#]+(?:\/[^\s?#]*)?$/;

/**
 * The `software` of a describe's advertisement (docs/protocol.md 14.1), or null when absent or when it
 * does not fit (`name` and `version` of the documented forms): a host's report is shown, never trusted.
 */
export function parseHostSoftware(value: unknown): HostSoftwareRecord | null {
  const r = HostSoftwareSchema.safeParse(value);
  return r.success ? { name: r.data.name, version: r.data.version } : null;
}

/**
 * The hosts a controller knows (docs/lifecycle.md): learned with a signed describe, trust bound to the key
 * (first use, or the key the operator pinned), with the operator's tier; their verified facts go into
 * the engine's facts cache and their contact into the liveness tracker. A refresh requires the key
 * the node was learned with: a node that answers with another key is marked unreachable and loses its
 * tier until the operator pins the new key.
 */
export class NodeBook {
  readonly cache: NodeFactsCache = new NodeFactsCache();
  /** Liveness from this controller's own checks (silence it did not ask about does not count). */
  readonly liveness: CheckedLiveness;
  readonly #store: StateStore;
  readonly #caller: Caller;
  readonly #now: () => number;
  readonly #healthTimeoutMs: number;
  readonly #clockSkewMs: number;
  /** When this book (this controller process) started (Unix ms). */
  readonly #startedAtMs: number;
  /** When each node last answered anything in this process (Unix ms). */
  readonly #heard = new Map<string, number>();
  /** The protocol features each node advertised in its last verified describe (memory only). */
  readonly #features = new Map<string, ReadonlySet<string>>();
  /** Each node's last measured clock offset (memory only). */
  readonly #clocks = new Map<string, ClockReading>();
  /** Nodes whose clock alert was raised in the current episode. */
  readonly #clockAlerted = new Set<string>();
  /** Nodes this book holds anything of, with what it last took from their shared record (tier, key, facts). */
  readonly #known = new Map<string, string>();

  constructor(store: StateStore, caller: Caller, config: PlaneConfig, now: () => number) {
    this.#store = store;
    this.#caller = caller;
    this.#now = now;
    this.#healthTimeoutMs = config.healthTimeoutMs;
    this.#clockSkewMs = config.clockSkewMs;
    this.#startedAtMs = now();
    this.liveness = new CheckedLiveness(config.deadAfterMs);
    for (const t of store.listTargets()) this.#restore(t);
  }

  /** Targets are loaded unreachable-until-described: their stored facts go back into the cache. */
  #restore(t: TargetRecord): void {
    this.#known.set(t.node_id, sharedMark(t));
    if (t.facts !== null && t.tier !== null) {
      try {
        this.cache.insert(t.facts, { now_ms: this.#now(), tier: t.tier, expectedKey: t.public_key });
      } catch {
        // Expired or otherwise stale facts: the next describe brings fresh ones.
      }
    }
    this.liveness.failure(t.node_id, t.unreachable_since_ms ?? this.#now());
  }

  /**
   * Takes in what another controller sharing the state wrote of node `nodeId` (docs/state.md): `t`,
   * its target as now stored, or undefined when it was removed. A removed node is forgotten (facts,
   * liveness, clock); otherwise its facts and tier go into the facts cache when they changed, and
   * its recorded liveness (the last describe another controller made: `last_seen_ms`, or
   * `unreachable_since_ms`) counts when it is newer than this controller's own observation.
   */
  observe(nodeId: string, t: TargetRecord | undefined): void {
    if (t === undefined) {
      if (this.#known.delete(nodeId)) this.#forget(nodeId);
      return;
    }
    const mark = sharedMark(t);
    if (this.#known.get(nodeId) !== mark) {
      this.#known.set(nodeId, mark);
      if (t.tier === null) this.cache.remove(nodeId);
      else if (t.facts !== null) {
        try {
          this.cache.insert(t.facts, { now_ms: this.#now(), tier: t.tier, expectedKey: t.public_key });
        } catch (err) {
          // The same statement (or an older one) with another tier: keep the facts, take the tier.
          if (
            err instanceof PlacementError &&
            err.code === 'facts_stale' &&
            this.cache.get(nodeId) !== undefined
          )
            this.cache.setTier(nodeId, t.tier);
          // Expired facts: the next describe brings fresh ones.
        }
      }
    }
    if (t.unreachable_since_ms === null) {
      if (t.last_seen_ms === null) return;
      this.liveness.observed(nodeId, { contactMs: t.last_seen_ms });
      this.#heard.set(nodeId, Math.max(t.last_seen_ms, this.#heard.get(nodeId) ?? 0));
    } else this.liveness.observed(nodeId, { downSinceMs: t.unreachable_since_ms });
  }

  /**
   * {@link NodeBook.observe} for every target as now stored (a full re-read); a node this book knew
   * that is no longer among them is forgotten. Answers the node ids forgotten.
   */
  observeAll(targets: readonly TargetRecord[]): string[] {
    const now = new Set(targets.map((t) => t.node_id));
    const gone = [...this.#known.keys()].filter((id) => !now.has(id));
    for (const id of gone) this.observe(id, undefined);
    for (const t of targets) this.observe(t.node_id, t);
    return gone;
  }

  /** The target with `nodeId`; `unknown_node` otherwise. */
  get(nodeId: string): TargetRecord {
    const t = this.#store.getTarget(nodeId);
    if (t === undefined) {
      throw new PlaneError('unknown_node', `no node ${nodeId} is known (see node ls)`, { field: 'node' });
    }
    return t;
  }

  /**
   * True when the node's last verified describe (since this process started) listed `feature` in its
   * advertisement: only then does a controller send it the optional body field of that feature.
   */
  reads(nodeId: string, feature: HostFeature): boolean {
    return this.#features.get(nodeId)?.has(feature) ?? false;
  }

  /**
   * Learns the node at `url` with a signed describe, under `tier`. With `key` the answer must be signed
   * by it (`key_mismatch` otherwise). A URL already known under another key is refused (`node_exists`:
   * pin the new key instead); adding a known node again updates its URL and tier.
   */
  async add(url: string, options: AddNodeOptions): Promise<TargetRecord> {
    if (!URL_RE.test(url) || url.length > 2048) {
      throw new PlaneError(
        'invalid_input',
        `url: expected ws://host:port or wss://host:port, got ${JSON.stringify(url.slice(0, 80))}`,
        { field: 'url' },
      );
    }
    if (options.key !== undefined && !isHex(options.key, 32)) {
      throw new PlaneError('invalid_input', 'key: expected 64 lower-case hex characters', { field: 'key' });
    }
    const d = await this.#describe(url, options.key);
    // By URL (an index on the store), not a read of every target: adding N nodes stays linear.
    const atUrl =
      this.#store.targetIdsAt?.(url) ??
      this.#store.listTargets().flatMap((t) => (t.url === url ? [t.node_id] : []));
    const other = atUrl.find((id) => id !== d.nodeId);
    if (other !== undefined) {
      throw new PlaneError(
        'node_exists',
        `${url} is known as node ${other}, which now answers with another key (${d.nodeId}); run 'heddle node pin ${other} --key ${d.publicKey}' if the machine was replaced on purpose`,
        { field: 'url' },
      );
    }
    const held = this.#store.getTarget(d.nodeId);
    const now = this.#now();
    const target: TargetRecord = {
      node_id: d.nodeId,
      url,
      public_key: d.publicKey,
      key_source: options.key !== undefined ? 'pinned' : (held?.key_source ?? 'tofu'),
      tier: options.tier,
      assigned_tier: options.tier,
      pending_key: null,
      routes: d.routes,
      software: d.software,
      facts: d.facts,
      lease_ms: d.leaseMs,
      learned_at_ms: held?.learned_at_ms ?? now,
      last_seen_ms: now,
      unreachable_since_ms: null,
      last_error: null,
    };
    this.#accept(target, d);
    this.#put(target);
    return target;
  }

  /**
   * Describes a known `heddle-host` again (the host driver's refresh: a health check, bounded by `healthTimeoutMs` on its own), requiring
   * its learned key. Returns the updated record; a node that cannot be reached in time, or answers
   * with another key, is recorded as unreachable (with the reason) and the record returned, never
   * thrown.
   */
  async refresh(nodeId: string): Promise<TargetRecord> {
    const t = this.get(nodeId);
    const now = this.#now();
    let refusedClock: ClockOffset | undefined;
    try {
      const d = await withDeadline(
        this.#describe(t.url, undefined, true, (c) => {
          refusedClock = c;
        }),
        this.#healthTimeoutMs,
        `${t.url}: no answer to the health check in ${this.#healthTimeoutMs} ms`,
      );
      if (d.publicKey !== t.public_key) {
        const next: TargetRecord = {
          ...t,
          tier: null,
          pending_key: d.publicKey,
          unreachable_since_ms: t.unreachable_since_ms ?? now,
          last_error: `${t.url} answered with another key ${d.publicKey} (node ${d.nodeId}); it has no tier until the operator pins that key`,
        };
        this.#put(next);
        this.cache.remove(nodeId);
        this.liveness.failure(nodeId, now);
        return next;
      }
      const next: TargetRecord = {
        ...t,
        routes: d.routes,
        software: d.software,
        facts: d.facts,
        lease_ms: d.leaseMs,
        last_seen_ms: now,
        unreachable_since_ms: null,
        last_error: null,
      };
      this.#put(next);
      this.#accept(next, d);
      return next;
    } catch (err) {
      let why = err instanceof Error ? err.message : String(err);
      // cast: assigned by the describe's callback, which TypeScript's flow analysis does not follow
      const refused = refusedClock as ClockOffset | undefined;
      if (refused !== undefined) {
        this.#clocks.set(nodeId, { ...refused, measured_at_ms: this.#now(), refused: true });
      }
      // A clock measured by this very check (refused, or answered with facts from its future).
      const c = this.#clocks.get(nodeId);
      if (c !== undefined && c.measured_at_ms >= now && Math.abs(c.offset_ms) > this.#clockSkewMs) {
        why = `clock skew: its clock is ${describeOffset(c)}, outside the ${this.#clockSkewMs / 1000} s window signed requests and facts allow; fix its time (NTP): ${why}`;
      }
      const next: TargetRecord = {
        ...t,
        unreachable_since_ms: t.unreachable_since_ms ?? now,
        last_error: why.slice(0, 512),
      };
      this.#put(next);
      this.liveness.failure(nodeId, now);
      return next;
    }
  }

  /**
   * The operator pins `key` for the node known as `nodeId` (whose address answered with another key,
   * or that was learned on first use). The key must answer at the node's URL. When the key is another
   * node's (the machine was replaced), the new node takes the URL and the tier and the old record stays,
   * without a tier, for its placements (remove it with `node rm`).
   */
  async pin(nodeId: string, key: string, tier?: NodeTier): Promise<TargetRecord> {
    if (!isHex(key, 32)) {
      throw new PlaneError('invalid_input', 'key: expected 64 lower-case hex characters', { field: 'key' });
    }
    const old = this.get(nodeId);
    const d = await this.#describe(old.url, key);
    const now = this.#now();
    const replaced = d.nodeId !== nodeId;
    const write = (): void => {
      if (!replaced) return;
      this.#put({
        ...old,
        tier: null,
        pending_key: null,
        unreachable_since_ms: old.unreachable_since_ms ?? now,
        last_error: `replaced by node ${d.nodeId} (key pinned by the operator)`,
        url: `${old.url}#replaced`,
      });
    };
    const target: TargetRecord = {
      ...(d.nodeId === nodeId ? old : {}),
      node_id: d.nodeId,
      url: old.url,
      public_key: d.publicKey,
      key_source: 'pinned',
      tier: tier ?? old.assigned_tier,
      assigned_tier: tier ?? old.assigned_tier,
      pending_key: null,
      routes: d.routes,
      software: d.software,
      facts: d.facts,
      lease_ms: d.leaseMs,
      learned_at_ms: d.nodeId === nodeId ? old.learned_at_ms : now,
      last_seen_ms: now,
      unreachable_since_ms: null,
      last_error: null,
    };
    this.#accept(target, d);
    // The old record and the new one land together, or neither does.
    this.#store.transaction(() => {
      write();
      this.#put(target);
    });
    if (replaced) this.cache.remove(nodeId);
    return target;
  }

  /**
   * Forgets a node. Refused (`invalid_input`) while the controller has live placements on it, unless
   * `force`: then `lose` is called for each of them, in the same transaction as the removal (the
   * caller marks them lost; nothing is unloaded on the node), and its results are returned.
   */
  remove<T>(nodeId: string, force = false, lose?: (p: PlacementRecord) => T): T[] {
    const t = this.get(nodeId);
    const placed = this.#store.listPlacements(nodeId).filter((p) => !isGone(p.state));
    if (placed.length > 0 && !force) {
      throw new PlaneError(
        'invalid_input',
        `node ${t.node_id} still has ${placed.length} placement(s) (${placed.map((p) => p.instance_id).join(', ')}); unload them first or remove with --force`,
        { field: 'node' },
      );
    }
    const lost = this.#store.transaction(() => {
      const out = lose === undefined ? [] : placed.map(lose);
      this.#store.removeTarget(nodeId);
      this.#store.removeRevocationAck(nodeId);
      return out;
    });
    this.#known.delete(nodeId);
    this.#forget(nodeId);
    return lost;
  }

  /** Writes `t` and notes what of it this book holds (so a re-read of it changes nothing). */
  #put(t: TargetRecord): void {
    this.#store.putTarget(t);
    this.#known.set(t.node_id, sharedMark(t));
  }

  /** Forgets what this process holds of `nodeId` (removed). */
  #forget(nodeId: string): void {
    // Forget the facts' sequence too, so that the same node can be added again at once.
    this.cache.remove(nodeId, { forgetSeq: true });
    this.liveness.forget(nodeId);
    this.#heard.delete(nodeId);
    this.#clocks.delete(nodeId);
    this.#clockAlerted.delete(nodeId);
  }

  /** Records a successful call to a node (any verified answer is contact). */
  contact(nodeId: string): void {
    const now = this.#now();
    this.liveness.contact(nodeId, now);
    this.#heard.set(nodeId, Math.max(now, this.#heard.get(nodeId) ?? 0));
  }

  /**
   * When the controller lease of `nodeId`'s host has surely expired and its continuous instances
   * stopped (Unix ms, this clock), or undefined when it advertises no lease: the last request this
   * process issued to it (or this process's start, for requests an earlier process issued) plus its
   * lease and stop time, plus the clock skew the protocol allows (docs/protocol.md, section 11).
   */
  leaseExpiredAtMs(nodeId: string): number | undefined {
    const t = this.#store.getTarget(nodeId);
    if (t?.lease_ms === undefined || t.lease_ms === null) return undefined;
    const last = Math.max(this.#caller.lastIssuedTo(nodeId, t.url) ?? 0, this.#startedAtMs);
    return last + t.lease_ms + this.#clockSkewMs;
  }

  /** When `nodeId` last answered anything in this process (Unix ms), or undefined. */
  heardAt(nodeId: string): number | undefined {
    return this.#heard.get(nodeId);
  }

  /** The clock offset of `nodeId` as last measured by a describe in this process, or undefined. */
  clockOf(nodeId: string): ClockReading | undefined {
    return this.#clocks.get(nodeId);
  }

  /**
   * True while a `clock_skew` alert was raised for `nodeId` in this episode (so one the operator
   * acknowledged is not raised again until the clock has been back).
   */
  clockAlerted(nodeId: string): boolean {
    return this.#clockAlerted.has(nodeId);
  }

  /** Marks (or clears) the clock alert episode of `nodeId` (see {@link clockAlerted}). */
  setClockAlerted(nodeId: string, on: boolean): void {
    if (on) this.#clockAlerted.add(nodeId);
    else this.#clockAlerted.delete(nodeId);
  }

  /** Every node's last clock reading (node id to reading). */
  clocks(): ReadonlyMap<string, ClockReading> {
    return this.#clocks;
  }

  #accept(t: TargetRecord, d: Described): void {
    const now = this.#now();
    if (d.clock !== undefined)
      this.#clocks.set(t.node_id, { ...d.clock, measured_at_ms: now, refused: false });
    try {
      this.cache.insert(d.facts, { now_ms: now, tier: t.tier ?? t.assigned_tier, expectedKey: t.public_key });
    } catch (err) {
      // The same statement again (facts are re-signed only after half their lifetime): keep it.
      if (!(err instanceof PlacementError && err.code === 'facts_stale')) throw err;
      if (t.tier !== null && this.cache.get(t.node_id) !== undefined) this.cache.setTier(t.node_id, t.tier);
    }
    this.liveness.contact(t.node_id, now);
    this.#heard.set(t.node_id, Math.max(now, this.#heard.get(t.node_id) ?? 0));
  }

  async #describe(
    url: string,
    key: string | undefined,
    health = false,
    onRefusedClock?: (c: ClockOffset) => void,
  ): Promise<Described> {
    let answer: DescribeAnswer;
    let publicKey: Uint8Array;
    const sentMs = this.#now();
    let receivedMs = sentMs;
    try {
      const r = await this.#caller.call({
        url,
        target: '*',
        method: 'workload.describe',
        health,
        ...(key === undefined ? {} : { expectedKey: key }),
      });
      receivedMs = this.#now();
      answer = r.result;
      publicKey = r.publicKey;
    } catch (err) {
      // A time-window refusal names the host's clock: its offset, measured like a describe answer's.
      if (err instanceof CallFailure && err.refusal?.code === 'expired' && onRefusedClock !== undefined) {
        const hostMs = hostClockFromReason(err.refusal.reason);
        const c = hostMs === null ? undefined : clockOffset(hostMs, sentMs, this.#now());
        if (c !== undefined) onRefusedClock(c);
      }
      if (
        err instanceof CallFailure &&
        err.cause instanceof ResponseError &&
        err.cause.code === 'key_mismatch'
      ) {
        throw new PlaneError('key_mismatch', `${url} did not answer with the key ${key}: ${err.message}`, {
          field: 'key',
          cause: err,
        });
      }
      if (err instanceof CallFailure && err.cause instanceof ProtocolError) {
        // A signed answer that does not fit the describe answer's schema: refused, naming the field.
        throw new PlaneError('refused', `${url}: ${err.cause.message}`, {
          ...(err.field === undefined ? {} : { field: err.field }),
          cause: err,
        });
      }
      const code = err instanceof CallFailure && err.code === 'refused' ? 'refused' : 'unreachable';
      throw new PlaneError(code, `${url}: ${err instanceof Error ? err.message : String(err)}`, {
        field: 'url',
        cause: err,
      });
    }
    const hex = toHex(publicKey);
    const nodeId = nodeIdFromPublicKey(publicKey);
    try {
      const v = verifyNodeFacts(answer.facts, hex);
      if (v.facts.node_id !== nodeId) throw new Error('facts name another node');
    } catch (err) {
      throw new PlaneError(
        'refused',
        `${url} (node ${nodeId}): facts refused: ${err instanceof Error ? err.message : String(err)}`,
        {
          field: 'facts',
          cause: err,
        },
      );
    }
    const ad = answer.advertisement;
    // An advertisement about another node says nothing about this one.
    const mine = ad.node_id === nodeId;
    if (mine) this.#features.set(nodeId, new Set(ad.features));
    return {
      publicKey: hex,
      nodeId,
      facts: answer.facts,
      routes: mine ? [...ad.routes] : [],
      software: mine ? ad.software : null,
      leaseMs:
        mine && ad.lease !== null && ad.lease.lease_ms > 0
          ? ad.lease.lease_ms + ad.lease.stops_within_ms
          : null,
      clock: mine && ad.clock_ms !== null ? clockOffset(ad.clock_ms, sentMs, receivedMs) : undefined,
    };
  }
}

/** What of a target the facts cache holds (its tier, key and signed facts), as one string. */
function sharedMark(t: TargetRecord): string {
  return `${t.tier ?? '-'} ${t.public_key} ${t.facts?.signature ?? '-'}`;
}

/** `45.2 s behind this controller's (±3 ms)`: an offset for people. */
export function describeOffset(c: ClockOffset): string {
  const s = (Math.abs(c.offset_ms) / 1000).toFixed(1);
  const side = c.offset_ms >= 0 ? 'ahead of' : 'behind';
  return `${s} s ${side} this controller's (±${c.error_ms} ms)`;
}
