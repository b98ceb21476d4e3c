import type { JsonValue } from '@heddle/envelope';
import { ChainKind, ChainSource, type CogRoute, type RevokedSubject } from '@heddle/model';
import type { RevocationHolder, VerifiedPackageStore } from '@heddle/package';
import type { HostRecorder, WorkloadHost } from '@heddle/runtime';
import { DepartedLog } from './departed.js';
import { InFlight } from './in-flight.js';
import { moveLife } from './instance-life.js';
import type { PlacedInstance } from './instance-record.js';
import type { InstanceStore } from './instance-store.js';
import { KeyedLock } from './keyed-lock.js';

/** The chain source of a host's placement and refusal records. */
export const HOST_CHAIN_SOURCE: string = ChainSource.host;

/** Teardown grace when a revocation forces an instance down: 2 s. */
export const REVOCATION_GRACE_MS = 2_000;

/**
 * What the request handlers of a host share: its identity, routes, packages, revocations, the
 * instances it placed and its bookkeeping. One per {@link HostService}.
 */
export class HostState {
  readonly nodeId: string;
  readonly routes: ReadonlyMap<CogRoute, WorkloadHost>;
  readonly packages: VerifiedPackageStore;
  readonly revocations: RevocationHolder;
  readonly recorder: HostRecorder;
  readonly dataRoot: string;
  readonly now: () => number;
  readonly instances: Map<string, PlacedInstance> = new Map();
  readonly departed: DepartedLog = new DepartedLog();
  readonly inFlight: InFlight = new InFlight();
  readonly locks: KeyedLock = new KeyedLock();

  constructor(init: {
    nodeId: string;
    routes: ReadonlyMap<CogRoute, WorkloadHost>;
    packages: VerifiedPackageStore;
    revocations: RevocationHolder;
    recorder: HostRecorder;
    dataRoot: string;
    now: () => number;
  }) {
    this.nodeId = init.nodeId;
    this.routes = init.routes;
    this.packages = init.packages;
    this.revocations = init.revocations;
    this.recorder = init.recorder;
    this.dataRoot = init.dataRoot;
    this.now = init.now;
  }

  /** Told of failures that cannot be answered to anyone (set by the HostService). */
  onError: (err: unknown) => void = () => {};

  /** Where the instance set is kept across restarts (set by the HostService; undefined: nowhere). */
  store: InstanceStore | undefined;

  /**
   * Writes the instance set to {@link store} (`instances.json`, crash-safe). Call it after every
   * change of the set or of an instance's `desiredRunning` / `leaseStopped`. A write that fails is
   * told to {@link onError}: the instance set in memory stays authoritative until the next write.
   */
  persist(): void {
    try {
      this.store?.save(this.instances.values());
    } catch (err) {
      this.onError(err);
    }
  }

  /** {@link record}, telling {@link onError} instead of rejecting when the chain cannot take it. */
  async recordOrReport(kind: string, payload: { [key: string]: JsonValue }): Promise<void> {
    try {
      await this.record(kind, payload);
    } catch (err) {
      this.onError(err);
    }
  }

  /** Chains `payload` as `kind` with source {@link HOST_CHAIN_SOURCE}. */
  async record(kind: string, payload: { [key: string]: JsonValue }): Promise<void> {
    await this.recorder.append(HOST_CHAIN_SOURCE, kind, payload);
  }

  readonly #packageHolds = new Map<string, number>();

  /** Holds the package of `manifestHash` for a place in progress; call the result to let go (once). */
  holdPackage(manifestHash: string): () => void {
    this.#packageHolds.set(manifestHash, (this.#packageHolds.get(manifestHash) ?? 0) + 1);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const n = (this.#packageHolds.get(manifestHash) ?? 1) - 1;
      if (n <= 0) this.#packageHolds.delete(manifestHash);
      else this.#packageHolds.set(manifestHash, n);
    };
  }

  /** Drops the held package of `manifestHash` when no instance uses it and no place holds it. */
  releasePackage(manifestHash: string): void {
    if ((this.#packageHolds.get(manifestHash) ?? 0) > 0) return;
    for (const p of this.instances.values()) if (p.manifestHash === manifestHash) return;
    this.packages.remove(manifestHash);
  }

  /** What the list in force revokes of `p` (package, signer or artifact), if anything. */
  revokedSubjectOf(p: PlacedInstance): RevokedSubject | undefined {
    const w = p.host.workloadFor(p.handle);
    return this.revocations.firstRevoked({
      packageId: p.packageId,
      signerKeys: w?.signerKeys ?? [],
      artifactHashes: w?.artifactHashes ?? [],
    });
  }

  /**
   * Tears `p` down if the list in force revokes it (not gated: the revocation is the authority),
   * remembers it as departed `revoked` and returns true. The caller holds `p`'s lock. A teardown that
   * fails leaves it listed (tried again on the next sweep) and returns false.
   */
  async enforceRevocationsOf(p: PlacedInstance): Promise<boolean> {
    const subject = this.revokedSubjectOf(p);
    if (subject === undefined || this.instances.get(p.instanceId) !== p) return false;
    const why: JsonValue = { kind: subject.kind, ref: subject.ref, reason: subject.reason ?? null };
    try {
      await p.host.revokeTeardown(p.handle, REVOCATION_GRACE_MS, why);
    } catch {
      return false;
    }
    this.instances.delete(p.instanceId);
    this.persist();
    this.departed.note({
      instance_id: p.instanceId,
      reason: 'revoked',
      at_ms: this.now(),
      decision_id: null,
    });
    this.releasePackage(p.manifestHash);
    const revokedWhy = { workload: p.name, revoked_kind: subject.kind, revoked_ref: subject.ref };
    await moveLife(this, p, 'revoked', `revoked ${subject.kind} ${subject.ref}`.slice(0, 200), revokedWhy);
    await moveLife(this, p, 'unloaded', 'torn down by the revocation', revokedWhy);
    return true;
  }

  /** Sweeps every instance with {@link enforceRevocationsOf}; returns the ids torn down. */
  async enforceRevocations(): Promise<string[]> {
    const torn: string[] = [];
    for (const p of [...this.instances.values()]) {
      if (this.revokedSubjectOf(p) === undefined) continue;
      const done = await this.locks.run(p.instanceId, () => this.enforceRevocationsOf(p));
      if (done) torn.push(p.instanceId);
    }
    return torn;
  }
}

/** The chain kinds a host writes itself (the WorkloadHost chains the runtime transitions). */
export const HOST_KINDS: {
  readonly place: string;
  readonly refuse: string;
  readonly pieceRejected: string;
  readonly fetch: string;
} = Object.freeze({
  place: ChainKind.place,
  refuse: ChainKind.refuse,
  pieceRejected: ChainKind.artifactPieceRejected,
  fetch: ChainKind.artifactFetch,
});
