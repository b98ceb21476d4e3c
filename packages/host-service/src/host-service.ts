import { join } from 'node:path';
import { type KeyPair, nodeIdFromPublicKey } from '@heddle/envelope';
import type { CogRoute } from '@heddle/model';
import {
  type KindRegistry,
  type RevocationHolder,
  type TrustAnchors,
  VerifiedPackageStore,
} from '@heddle/package';
import {
  type ControllerPolicy,
  type CtlMethod,
  type CtlRequest,
  claimedRequest,
  type HostFeature,
  type HostSoftware,
  MAX_CLOCK_SKEW_MS,
  type MethodAnswer,
  mutates,
  NonceGuard,
  okOutcome,
  Refusal,
  type SignedCtl,
  signResponse,
  verifyRequest,
  type WorkloadHostAdvertisement,
} from '@heddle/protocol';
import { type HostRecorder, probeSystem, type WorkloadHost } from '@heddle/runtime';
import type { CallContext, CallHandler, FetchOptions } from '@heddle/wire';
import { describeAnswer, workloadHostAdvertisement } from './advertisement.js';
import { type CallNote, type HostCallEvent, instanceIdOf, newCallNote, requestIdOf } from './call-event.js';
import { HostServiceError, messageOf } from './errors.js';
import { NodeFactsSource } from './facts-source.js';
import { HOST_KINDS, HostState } from './host-state.js';
import { instanceOp } from './instance-ops.js';
import { InstanceStore } from './instance-store.js';
import { ControllerLease } from './lease.js';
import { LEASE_FILE, LeaseFile } from './lease-file.js';
import { NonceJournal, type NonceJournalReport } from './nonce-journal.js';
import { type PlaceCall, placeWorkload } from './place.js';
import type { ReadinessProbe } from './readiness.js';
import { type RecoveryReport, recoverInstances } from './recovery.js';
import { RefusalBudget, type RefusalBudgetOptions } from './refusal-budget.js';
import { revokeOp } from './revoke-op.js';
import { routeTable } from './route-table.js';
import { drainInstances } from './shutdown.js';
import { Supervisor, type SupervisorEvent } from './supervisor.js';
import { type SupervisorOptions, supervisorPolicy } from './supervisor-policy.js';

/** The answer of any method (the `result` of an `ok` outcome). */
type HostAnswer = MethodAnswer<CtlMethod>;

/** Options of a {@link HostService}. */
export interface HostServiceOptions {
  /** The node's key: requests must target its id; responses and facts are signed with it. */
  readonly keys: KeyPair;
  /** Which controllers may call which methods. */
  readonly controllers: ControllerPolicy;
  /** This node's own trust anchors (fetched packages are verified against them, never the controller's). */
  readonly anchors: TrustAnchors;
  /** The revocation list this node enforces (also give it to the gate of every route). */
  readonly revocations: RevocationHolder;
  /** One WorkloadHost per route, keyed by its adapter's route (`native`, `wasi`, `container`). */
  readonly routes: Iterable<WorkloadHost>;
  /** The chain for `workload.place`, `workload.refuse` and `artifact.*` records. */
  readonly recorder: HostRecorder;
  /** Where held packages (`packages/`) and instance data directories (`instances/`) live. */
  readonly dataDir: string;
  /** Signed facts for `describe` (default: the system probe plus every route's `provides()`). */
  readonly facts?: NodeFactsSource;
  /** The address advertised to controllers (`ws://host:port/`). */
  readonly address?: string;
  /** The program and version reported in `describe` (`advertisement.software`); default none (null). */
  readonly software?: HostSoftware;
  /** The per-session call cap the wire server enforces, advertised in `describe` (default the wire's, 8). */
  readonly maxCallsPerSession?: number;
  /** Kinds accepted for fetched packages (default `@heddle/package`'s). */
  readonly kinds?: KindRegistry;
  /** Limits and timeouts of package fetches (default: those of `@heddle/wire`). */
  readonly fetch?: FetchOptions;
  /** Bound on chained refusals of unauthenticated requests (default 16 a minute). */
  readonly refusalBudget?: RefusalBudgetOptions;
  /** Replay memory (default a fresh `NonceGuard`, or the one of `nonceJournal`). */
  readonly nonces?: NonceGuard;
  /**
   * The nonce journal (docs/protocol.md section 8): the nonce of every accepted mutating request is
   * written to `path` before it is acted on, and put back into the memory at start-up, so that no
   * request can act twice across a restart. When the journal is corrupt, or missing while
   * `expected` (a host that has run before), mutating requests issued before start-up plus the clock
   * skew are refused (`expired`). Ignored when `nonces` is given.
   */
  readonly nonceJournal?: { readonly path: string; readonly expected: boolean };
  /** The clock (Unix ms; default `Date.now`). */
  readonly now?: () => number;
  /** Told of failures that cannot be answered to anyone (a refusal that could not be chained). */
  readonly onError?: (err: unknown) => void;
  /** The supervisor's timing and restart budget (defaults: `supervisor-policy.ts`). */
  readonly supervisor?: SupervisorOptions;
  /**
   * Readiness of listener instances: a probe, or `false` for none. Default: a TCP connect to
   * 127.0.0.1:`port` for a listener placed with an integer `port` config value (docs/host.md).
   */
  readonly readiness?: ReadinessProbe | false;
  /** The controller lease (ms): continuous instances stop when no controller was heard from for this long. Default off. */
  readonly leaseMs?: number;
  /** Told of what the supervisor and the lease did (restarts, failures, lease stops), for logs. */
  readonly onSupervision?: (e: SupervisorEvent) => void;
  /**
   * The optional protocol features advertised in `describe` (default all of `HOST_FEATURES`; `[]`
   * makes the host look like one from before them: a controller then sends it no optional field).
   */
  readonly features?: readonly HostFeature[];
  /** Told of every request once it is answered (for the request log and metrics; a throw is ignored). */
  readonly onCall?: (e: HostCallEvent) => void;
}

/** What {@link HostService.handle} needs of its call (a wire `CallContext` fits). */
export type HostCallContext = Pick<CallContext, 'method' | 'closeAfterReply'> &
  Partial<Pick<CallContext, 'authenticated'>> &
  PlaceCall;

/**
 * A node's `workload-host` (docs/protocol.md, docs/host.md): verifies every signed request in the protocol's order,
 * dispatches it (describe, place, load, start, stop, unload, status, logs) and answers with a signed
 * response. A request that fails verification gets one signed refusal (the connection is then closed)
 * and is chained within a budget; a refusal of a verified request is always chained. See
 * docs/host.md.
 */
export class HostService {
  /** This node's id. */
  readonly nodeId: string;
  readonly #keys: KeyPair;
  readonly #controllers: ControllerPolicy;
  readonly #nonces: NonceGuard;
  readonly #notIssuedBeforeMs: number;
  readonly #journal: NonceJournal | undefined;
  /** What opening the nonce journal found, when the service keeps one. */
  readonly nonceJournalReport: NonceJournalReport | undefined;
  readonly #state: HostState;
  readonly #facts: NodeFactsSource;
  readonly #address: string | undefined;
  readonly #software: HostSoftware | undefined;
  readonly #maxCallsPerSession: number | undefined;
  readonly #fetch: FetchOptions;
  readonly #budget: RefusalBudget;
  readonly #onError: (err: unknown) => void;
  readonly #onCall: ((e: HostCallEvent) => void) | undefined;
  readonly #features: readonly HostFeature[] | undefined;
  readonly #lease: ControllerLease | undefined;
  readonly #leaseFile: LeaseFile | undefined;
  readonly #supervisor: Supervisor;
  readonly #operatorKeys: readonly string[];
  readonly #anchors: TrustAnchors;
  readonly #kinds: KindRegistry | undefined;
  #recovered = false;
  #active = 0;
  #idle: (() => void) | undefined;
  #draining = false;
  #halted = false;

  /** Throws `HostServiceError` `invalid_config` for two adapters on one route or a route that is not one. */
  constructor(options: HostServiceOptions) {
    this.#keys = options.keys;
    this.nodeId = nodeIdFromPublicKey(options.keys.publicKey);
    this.#controllers = options.controllers;
    const routes = routeTable(options.routes);
    const now = options.now ?? Date.now;
    if (options.nonces === undefined && options.nonceJournal !== undefined) {
      const startedMs = now();
      const opened = NonceJournal.open({ path: options.nonceJournal.path, nowMs: startedMs });
      this.#nonces = opened.guard;
      this.#journal = opened.journal;
      this.nonceJournalReport = opened.report;
      const lost =
        opened.report.state === 'corrupt' ||
        (opened.report.state === 'missing' && options.nonceJournal.expected);
      this.#notIssuedBeforeMs = lost ? startedMs + MAX_CLOCK_SKEW_MS : 0;
    } else {
      this.#nonces = options.nonces ?? new NonceGuard();
      this.#notIssuedBeforeMs = 0;
    }
    this.#state = new HostState({
      nodeId: this.nodeId,
      routes,
      packages: new VerifiedPackageStore({
        dir: join(options.dataDir, 'packages'),
        anchors: options.anchors,
        revocations: options.revocations,
        ...(options.kinds === undefined ? {} : { kinds: options.kinds }),
      }),
      revocations: options.revocations,
      recorder: options.recorder,
      dataRoot: join(options.dataDir, 'instances'),
      now,
    });
    this.#facts =
      options.facts ??
      new NodeFactsSource({
        keys: options.keys,
        now,
        probe: async () => {
          const caps = [...probeSystem()];
          for (const host of routes.values()) caps.push(...(await host.adapter.provides()));
          return caps;
        },
      });
    this.#address = options.address;
    this.#software = options.software;
    this.#maxCallsPerSession = options.maxCallsPerSession;
    this.#fetch = options.fetch ?? {};
    this.#budget = new RefusalBudget(options.refusalBudget);
    this.#onError = options.onError ?? (() => {});
    this.#onCall = options.onCall;
    this.#features = options.features;
    this.#operatorKeys = options.anchors.operatorKeys();
    this.#anchors = options.anchors;
    this.#kinds = options.kinds;
    this.#state.store = new InstanceStore(options.dataDir, now);
    this.#state.onError = this.#onError;
    const policy = supervisorPolicy(options.supervisor);
    if (options.leaseMs !== undefined) {
      // Resumed from when a controller was last heard from before a restart (never from the start-up:
      // a host restarted while cut off must not run its instances for a whole new lease).
      const startedMs = now();
      this.#leaseFile = new LeaseFile(join(options.dataDir, LEASE_FILE), this.#onError);
      const heardMs = this.#leaseFile.read(startedMs);
      this.#lease = new ControllerLease(options.leaseMs, heardMs ?? startedMs, { nowMs: startedMs });
      if (heardMs === undefined) this.#leaseFile.write(startedMs);
    }
    this.#supervisor = new Supervisor({
      state: this.#state,
      policy,
      ...(options.readiness === undefined ? {} : { readiness: options.readiness }),
      ...(this.#lease === undefined ? {} : { lease: this.#lease }),
      ...(options.onSupervision === undefined ? {} : { onEvent: options.onSupervision }),
      onError: this.#onError,
    });
    this.#supervisor.start();
  }

  /** The supervisor (its `tick()` runs one pass now). */
  get supervisor(): Supervisor {
    return this.#supervisor;
  }

  /** The controller lease, when configured. */
  get lease(): ControllerLease | undefined {
    return this.#lease;
  }

  /** The routes this host has an adapter for, sorted. */
  get routes(): CogRoute[] {
    return [...this.#state.routes.keys()].sort();
  }

  /** The `workload-host` advertisement. */
  advertisement(): WorkloadHostAdvertisement {
    const policy = this.#supervisor.policy;
    return workloadHostAdvertisement({
      nodeId: this.nodeId,
      routes: this.#state.routes.keys(),
      ...(this.#address === undefined ? {} : { address: this.#address }),
      ...(this.#software === undefined ? {} : { software: this.#software }),
      ...(this.#maxCallsPerSession === undefined ? {} : { maxCallsPerSession: this.#maxCallsPerSession }),
      ...(this.#features === undefined ? {} : { features: this.#features }),
      clockMs: this.#state.now(),
      ...(this.#lease === undefined
        ? {}
        : {
            lease: { lease_ms: this.#lease.leaseMs, stops_within_ms: policy.intervalMs + policy.stopGraceMs },
          }),
    });
  }

  /** The ids of the instances placed here. */
  instanceIds(): string[] {
    return [...this.#state.instances.keys()];
  }

  /** How many instances placed here are in each lifecycle state (for metrics). */
  instanceLives(): Map<string, number> {
    const out = new Map<string, number>();
    for (const p of this.#state.instances.values()) out.set(p.life.state, (out.get(p.life.state) ?? 0) + 1);
    return out;
  }

  /** Requests being handled right now. */
  get activeCalls(): number {
    return this.#active;
  }

  /** The handler to give `WireServer.listen`. */
  get handler(): CallHandler {
    return (signed, ctx) => this.handle(signed, ctx);
  }

  /**
   * Adopts again the instances a previous run of this host placed (`<data_dir>/instances.json`), once,
   * before serving: see `recoverInstances` (docs/host.md, "Restarts and re-adoption"). Returns what
   * was adopted, lost and revoked, and whether the file had to be set aside; never throws for a bad
   * file or record.
   */
  async recover(): Promise<RecoveryReport> {
    if (this.#recovered) return { adopted: [], lost: [], revoked: [] };
    this.#recovered = true;
    const store = this.#state.store;
    if (store === undefined) return { adopted: [], lost: [], revoked: [] };
    return recoverInstances(this.#state, {
      store,
      anchors: this.#anchors,
      ...(this.#kinds === undefined ? {} : { kinds: this.#kinds }),
    });
  }

  /** Re-reads the revocation list and, when it changed, tears down what it revokes; returns their ids. */
  async reloadRevocations(): Promise<string[]> {
    if (!this.#state.revocations.reload()) return [];
    return this.#state.enforceRevocations();
  }

  /** Tears down every instance the revocation list in force revokes; returns their ids. */
  enforceRevocations(): Promise<string[]> {
    return this.#state.enforceRevocations();
  }

  /**
   * Answers one signed request. Never rejects for anything the peer sent: every failure is a signed
   * refusal. Unauthenticated refusals ask the transport to close the connection after the reply.
   */
  async handle(signed: SignedCtl, ctx: HostCallContext): Promise<SignedCtl> {
    this.#active++;
    const started = performance.now();
    const note = newCallNote();
    try {
      return await this.#handle(signed, ctx, note);
    } finally {
      this.#active--;
      if (this.#active === 0) this.#idle?.();
      this.#tellCall(ctx.method, note, performance.now() - started);
    }
  }

  #tellCall(method: string, note: CallNote, ms: number): void {
    if (this.#onCall === undefined) return;
    try {
      this.#onCall({ method, outcome: note.code === null ? 'ok' : 'refused', ms, ...note });
    } catch (err) {
      this.#onError(err);
    }
  }

  async #handle(signed: SignedCtl, ctx: HostCallContext, note: CallNote): Promise<SignedCtl> {
    let request: CtlRequest;
    try {
      request = verifyRequest(signed, {
        nodeId: this.nodeId,
        now: this.#state.now(),
        policy: this.#controllers,
        nonces: this.#nonces,
        expectedMethod: ctx.method,
        notIssuedBeforeMs: this.#notIssuedBeforeMs,
      }).request;
      ctx.authenticated?.(); // the wire stops counting this connection as unauthenticated
      note.authenticated = true;
      note.requester = request.requester;
      note.decision_id = request.decision_id ?? null;
      note.request_id = requestIdOf(request.body);
    } catch (err) {
      const refusal =
        err instanceof Refusal ? err : new Refusal('invalid_request', 'the request could not be checked');
      note.code = refusal.code;
      await this.#chainRefusal(undefined, 'verify', refusal);
      ctx.closeAfterReply();
      return signResponse(claimedRequest(signed, ctx.method), refusal, this.#keys);
    }
    if (request.requester !== this.nodeId && this.#lease !== undefined) {
      // A lease that expired (a host that was frozen, or cut off) stops its instances before anything
      // else, even before the request that would renew it is served (docs/lifecycle.md, "At most once").
      if (this.#lease.expired(this.#state.now())) await this.#supervisor.tick();
      // Renewed up to the request's issue time, never to when it arrived: a request that waited (in a
      // frozen process's socket, or in the network) renews nothing its controller did not count on.
      const nowMs = this.#state.now();
      this.#lease.heard(Math.min(nowMs, request.issued_at_ms), nowMs);
      this.#leaseFile?.heard(this.#lease.lastHeardMs);
    }
    let outcome: HostAnswer | Refusal;
    try {
      if (this.#draining) {
        throw new Refusal('runtime', 'the host is shutting down; nothing was done, try again later', {
          authenticated: true,
        });
      }
      outcome = await this.#dispatch(request, ctx);
    } catch (err) {
      outcome =
        err instanceof Refusal
          ? err
          : new Refusal('runtime', `internal error: ${messageOf(err)}`, {
              authenticated: true,
            });
    }
    if (outcome instanceof Refusal) {
      note.code = outcome.code;
      await this.#chainRefusal(request, 'handle', outcome);
    } else note.instance_id = instanceIdOf(outcome);
    try {
      return signResponse(request, outcome instanceof Refusal ? outcome : okOutcome(outcome), this.#keys);
    } catch (err) {
      const why = new Refusal('runtime', `the answer could not be signed: ${messageOf(err)}`, {
        authenticated: true,
      });
      note.code = why.code;
      await this.#chainRefusal(request, 'respond', why);
      return signResponse(request, why, this.#keys);
    }
  }

  async #dispatch(request: CtlRequest, ctx: HostCallContext): Promise<HostAnswer> {
    if (!mutates(request.method)) return this.#route(request, ctx);
    try {
      return await this.#route(request, ctx);
    } finally {
      // Whatever a mutation did (or undid) to the instance set is on disk before it is answered.
      this.#state.persist();
    }
  }

  async #route(request: CtlRequest, ctx: HostCallContext): Promise<HostAnswer> {
    switch (request.method) {
      case 'workload.describe':
        return describeAnswer(await this.#facts.current(), this.advertisement());
      case 'workload.place':
      case 'workload.load':
        return placeWorkload(this.#state, request, ctx, this.#fetch);
      case 'workload.revoke':
        return revokeOp(this.#state, request, this.#operatorKeys);
      default:
        return instanceOp(this.#state, request);
    }
  }

  async #chainRefusal(request: CtlRequest | undefined, phase: string, r: Refusal): Promise<void> {
    let suppressed = 0;
    if (request === undefined) {
      const n = this.#budget.take(this.#state.now());
      if (n === undefined) return;
      suppressed = n;
    }
    try {
      await this.#state.record(HOST_KINDS.refuse, {
        node: this.nodeId,
        phase,
        code: r.code,
        reason: r.reason.slice(0, 1024),
        field: r.field ?? null,
        method: request?.method ?? null,
        requester: request?.requester ?? null,
        decision_id: request?.decision_id ?? null,
        authenticated: request !== undefined,
        suppressed,
      });
    } catch (err) {
      this.#onError(err);
    }
  }

  /**
   * Stops as a power loss would, for a process that runs many hosts and ends one of them (hollow
   * hosts, docs/hollow.md): the supervisor stops, the nonce journal is closed (what it holds stays on
   * disk), and from now on verified requests are refused (`runtime`, nothing done). Nothing is
   * drained or stopped, nothing more is written: the next start on the same data directory finds
   * what a crash would leave. Idempotent; use {@link shutdown} for a graceful stop.
   */
  async halt(): Promise<void> {
    if (this.#halted) return;
    this.#halted = true;
    this.#draining = true;
    await this.#supervisor.stop();
    this.#journal?.close();
  }

  /**
   * Graceful shutdown: from now on verified requests are refused (`runtime`, nothing done); waits up
   * to `graceMs` for the calls being handled to finish; then stops every running instance (gated by
   * the teardown waiver and chained), so each is left loaded and stopped. Returns the ids stopped and
   * those whose stop failed.
   */
  async shutdown(graceMs = 30_000): Promise<{ stopped: string[]; failed: string[] }> {
    if (this.#draining) throw new HostServiceError('shutting_down', 'shutdown was already requested');
    this.#draining = true;
    await this.#supervisor.stop();
    if (this.#active > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, graceMs);
        this.#idle = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    const drained = await drainInstances(this.#state);
    // What the next start adopts: each instance as the drain left it (stopped, still loaded).
    this.#state.persist();
    if (this.#lease !== undefined) this.#leaseFile?.write(this.#lease.lastHeardMs);
    this.#journal?.close(); // a request arriving now is refused (the journal cannot record it)
    return drained;
  }
}
