import { ChainKind, ChainSource } from '@heddle/chain';
import type { JsonValue } from '@heddle/envelope';
import { type Decision, type GateContext, NODE_TIERS, type NodeTier } from '@heddle/gate';
import { VERSION_RE } from '@heddle/package';
import type { InstanceHandle, InstanceStatus, Preemption, RunEvidence, WorkloadRuntime } from './contract.js';
import { RuntimeError } from './errors.js';
import {
  AUDIT_LIMITS,
  admissionForAudit,
  auditJson,
  auditList,
  auditText,
  evidenceForAudit,
  redactEvidence,
} from './host-audit.js';
import { gateContextFor } from './host-context.js';
import { redactJson, redactSecrets } from './host-redact.js';
import {
  hostContractForAudit,
  type RuntimeWorkload,
  type WorkloadConfig,
  workloadFromStorePin,
} from './workload.js';

/** Chain source of the WorkloadHost's lifecycle outcomes (the gate chains its decisions as `workload`). */
export const RUNTIME_CHAIN_SOURCE: 'workload.runtime' = ChainSource.runtime;

/**
 * The governance gate as the WorkloadHost uses it: structurally `Gate` of `@heddle/gate`, which
 * chains every decision itself (source `workload`, the action as kind).
 */
export interface HostGate {
  check(agent: string, action: string, context: GateContext): Promise<Decision>;
  checkTeardown(agent: string, action: string, context: GateContext): Promise<Decision>;
}

/** Where outcomes are chained: structurally `append` of an `@heddle/chain` chain. */
export interface HostRecorder {
  append(source: string, kind: string, payload: JsonValue): Promise<unknown>;
}

/** Options of {@link WorkloadHost}. */
export interface WorkloadHostOptions {
  /** The adapter this host governs. */
  readonly runtime: WorkloadRuntime;
  /** The governance gate. */
  readonly gate: HostGate;
  /** The audit chain. */
  readonly recorder: HostRecorder;
  /** The agent every gate check is made as (the host's name in the policy's `agents`). */
  readonly agent: string;
  /** The operator-assigned tier of this node (change it with {@link WorkloadHost.setNodeTier}). */
  readonly nodeTier: NodeTier;
}

/** An instance this host loaded or adopted. */
export interface HostedInstance {
  readonly instanceId: string;
  readonly workload: RuntimeWorkload;
  /** Whether admission said it runs under emulation (false for adopted instances). */
  readonly emulated: boolean;
}

interface Entry {
  readonly workload: RuntimeWorkload;
  readonly emulated: boolean;
  /** The instance's ingest token: kept only to redact it from what is chained and returned. */
  readonly token: string | undefined;
}

interface Preempted {
  readonly p: Preemption;
  readonly workload: RuntimeWorkload;
  readonly emulated: boolean;
}

type Payload = { [key: string]: JsonValue };

/**
 * Wraps one {@link WorkloadRuntime}: every transition is admitted, then gated, then handed to the
 * adapter, and its outcome chained (source {@link RUNTIME_CHAIN_SOURCE}, the action as kind;
 * failures as `workload.refuse` with `failed_action`, `error_code` and `reason`). A denied or
 * deferred action never reaches the adapter: it is chained as a refusal and rejected with
 * `RuntimeError` code `governance`. Stop and unload use the gate's teardown waiver; a revocation
 * teardown is not gated. See docs/runtimes.md.
 *
 * Errors: `unknown_instance` for a handle this host did not load or adopt (nothing chained);
 * `governance`; the adapter's own `RuntimeError` (anything else it throws becomes `runtime`). When a
 * transition succeeded but its record could not be chained, the call rejects with `runtime` naming
 * the record (the transition did happen; {@link WorkloadHost.instances} reflects it).
 */
export class WorkloadHost {
  private readonly runtime: WorkloadRuntime;
  private readonly gate: HostGate;
  private readonly recorder: HostRecorder;
  private readonly agent: string;
  private tier: NodeTier;
  private readonly loaded = new Map<string, Entry>();

  constructor(options: WorkloadHostOptions) {
    this.runtime = options.runtime;
    this.gate = options.gate;
    this.recorder = options.recorder;
    this.agent = options.agent;
    this.tier = checkTier(options.nodeTier);
  }

  /** The adapter. */
  get adapter(): WorkloadRuntime {
    return this.runtime;
  }

  /** The tier this node is governed at right now. */
  get nodeTier(): NodeTier {
    return this.tier;
  }

  /**
   * Changes the governed tier (an operator demotion or promotion). Applies to the next gated call,
   * including calls on instances already placed. Throws `invalid_config` for a value that is not a tier.
   */
  setNodeTier(tier: NodeTier): void {
    this.tier = checkTier(tier);
  }

  /** The workload an instance came from, if this host loaded or adopted it. */
  workloadFor(handle: InstanceHandle): RuntimeWorkload | undefined {
    return this.loaded.get(handle.instanceId)?.workload;
  }

  /** The instances this host loaded or adopted and has not unloaded. */
  instances(): HostedInstance[] {
    return [...this.loaded].map(([instanceId, e]) => ({
      instanceId,
      workload: e.workload,
      emulated: e.emulated,
    }));
  }

  /**
   * Admits, gates (`workload.install` first for a store pin, then `workload.load`) and loads. The
   * adapter's admission self-check comes first and a refusal of it is chained as `workload.refuse`
   * without asking the gate. The outcome is chained as `workload.load` with the admission and the
   * host contract (the ingest token only as `set`/`none`); a store pin the adapter installed is also
   * chained as `workload.install`.
   */
  async load(workload: RuntimeWorkload, config: WorkloadConfig): Promise<InstanceHandle> {
    const token = config.host.ingestToken;
    const secrets = this.secrets(token);
    const admitted = await settle(() => this.runtime.admit(workload));
    const admission = admitted.ok ? admitted.value : undefined;
    const emulated = admission?.emulated === true;
    const payload: Payload = {
      ...this.base(workload, null, secrets),
      admission: admission === undefined ? null : admissionForAudit(admission, secrets),
      host_contract: auditJson(hostContractForAudit(config.host), secrets),
    };
    if (!admitted.ok) return this.refuseWith(ChainKind.load, payload, admitted.error, secrets);
    if (workload.source.type === 'store_pin') {
      await this.gated('workload.install', workload, emulated, false, payload, secrets);
    }
    await this.gated('workload.load', workload, emulated, false, payload, secrets);
    const r = await settle(() => this.runtime.load(workload, config));
    const errors: RuntimeError[] = [];
    if (r.ok) {
      const handle = r.value;
      this.loaded.set(handle.instanceId, { workload, emulated, token });
      payload.instance_id = auditText(handle.instanceId, AUDIT_LIMITS.shortText, secrets);
      if (handle.storeInstalled === true) {
        const installed = {
          ...this.base(workload, handle.instanceId, secrets),
          outcome: 'ok',
          source: 'store_pin',
        };
        await this.record(ChainKind.install, installed, secrets, errors);
      }
    }
    await this.outcome(ChainKind.load, payload, r, secrets, errors);
    return done(r, errors);
  }

  /**
   * Re-attaches an instance loaded before a restart (`WorkloadRuntime.adopt`), gated as
   * `workload.load` through the teardown check and chained as `workload.load` with phase
   * `readopted`. A no-op when the instance is already known.
   */
  async adopt(handle: InstanceHandle, workload: RuntimeWorkload): Promise<void> {
    if (this.loaded.has(handle.instanceId)) return;
    const secrets = this.secrets();
    const payload: Payload = { ...this.base(workload, handle.instanceId, secrets), phase: 'readopted' };
    await this.gated('workload.load', workload, false, true, payload, secrets);
    const r = await settle(() => this.runtime.adopt(handle, workload));
    if (r.ok) this.loaded.set(handle.instanceId, { workload, emulated: false, token: undefined });
    const errors: RuntimeError[] = [];
    await this.outcome(ChainKind.load, payload, r, secrets, errors);
    done(r, errors);
  }

  /** Gates `workload.start` and starts; chained as `workload.start`. */
  async start(handle: InstanceHandle): Promise<void> {
    const e = this.entry(handle);
    const secrets = this.secrets();
    const payload = this.base(e.workload, handle.instanceId, secrets);
    await this.gated('workload.start', e.workload, e.emulated, false, payload, secrets);
    const r = await settle(() => this.runtime.start(handle));
    const errors: RuntimeError[] = [];
    await this.outcome(ChainKind.start, payload, r, secrets, errors);
    done(r, errors);
  }

  /**
   * Runs one console command, gated and chained as `workload.start` with phase `console`.
   *
   * The instances the adapter names in `consolePreemptions` are each gated as `workload.stop` first;
   * if any is denied, nothing is stopped and the run is refused. Each is then preempted and chained as
   * `workload.stop` with phase `preempt-for-console` as it happens; the console runs; each stopped one
   * is gated as `workload.start`, resumed and chained as `workload.start` with phase
   * `resume-after-console` (a denied one stays stopped). The console record comes last, with
   * `preempted`, `resumed` and the evidence, whose `stoppedForConsole` lists the preempted workloads.
   */
  async console(handle: InstanceHandle, command: string): Promise<RunEvidence> {
    const e = this.entry(handle);
    const secrets = this.secrets();
    const payload: Payload = { ...this.base(e.workload, handle.instanceId, secrets), phase: 'console' };
    await this.gated('workload.start', e.workload, e.emulated, false, payload, secrets);
    const permitted = await settle(() => this.preemptionsPermitted(handle));
    if (!permitted.ok) return this.refuseWith(ChainKind.start, payload, permitted.error, secrets);
    const errors: RuntimeError[] = [];
    const stopped: Preempted[] = [];
    let failed: Settled<never> | undefined;
    for (const x of permitted.value) {
      const r = await settle(() => this.runtime.preempt(x.p));
      await this.outcome(
        ChainKind.stop,
        this.preemptPayload(x.p, handle, 'preempt-for-console', secrets),
        r,
        secrets,
        errors,
      );
      if (!r.ok) {
        failed = r;
        break;
      }
      stopped.push(x);
    }
    const run = failed ?? (await settle(() => this.runtime.console(handle, command)));
    const resumed: string[] = [];
    for (const x of stopped) {
      const rp = this.preemptPayload(x.p, handle, 'resume-after-console', secrets);
      try {
        await this.gated('workload.start', x.workload, x.emulated, false, rp, secrets);
      } catch {
        continue; // the denial is chained; the workload stays stopped
      }
      const r = await settle(() => this.runtime.resume(x.p));
      await this.outcome(ChainKind.start, rp, r, secrets, errors);
      if (r.ok) resumed.push(x.p.workloadId);
    }
    const ids = stopped.map((x) => x.p.workloadId);
    payload.preempted = auditList(ids, secrets);
    payload.resumed = auditList(resumed, secrets);
    const result: Settled<RunEvidence> = run.ok
      ? { ok: true, value: { ...run.value, stoppedForConsole: ids } }
      : run;
    if (result.ok) payload.evidence = evidenceForAudit(result.value, secrets);
    await this.outcome(ChainKind.start, payload, result, secrets, errors);
    return redactEvidence(done(result, errors), secrets);
  }

  /** Gates `workload.stop` (teardown waiver) and stops; chained as `workload.stop` with the evidence. */
  async stop(handle: InstanceHandle, graceMs: number): Promise<RunEvidence> {
    const e = this.entry(handle);
    const secrets = this.secrets();
    const payload = this.base(e.workload, handle.instanceId, secrets);
    await this.gated('workload.stop', e.workload, e.emulated, true, payload, secrets);
    const r = await settle(() => this.runtime.stop(handle, graceMs));
    if (r.ok) payload.evidence = evidenceForAudit(r.value, secrets);
    const errors: RuntimeError[] = [];
    await this.outcome(ChainKind.stop, payload, r, secrets, errors);
    return redactEvidence(done(r, errors), secrets);
  }

  /** Gates `workload.unload` (teardown waiver) and unloads; chained as `workload.unload`. */
  async unload(handle: InstanceHandle): Promise<void> {
    const e = this.entry(handle);
    const secrets = this.secrets();
    const payload = this.base(e.workload, handle.instanceId, secrets);
    await this.gated('workload.unload', e.workload, e.emulated, true, payload, secrets);
    const r = await settle(() => this.runtime.unload(handle));
    if (r.ok) this.loaded.delete(handle.instanceId);
    const errors: RuntimeError[] = [];
    await this.outcome(ChainKind.unload, payload, r, secrets, errors);
    done(r, errors);
  }

  /**
   * Stops and unloads an instance because its package, signer or artifact was revoked. Not gated:
   * the applied revocation is the authority, so enforcement cannot depend on a stop or unload permit.
   * `why` (what was revoked, bounded) is chained as `forced_by_revocation` on both records. The unload
   * is attempted even when the stop fails (the instance may already have exited); the call rejects
   * with the unload's error, if any.
   */
  async revokeTeardown(handle: InstanceHandle, graceMs: number, why: JsonValue): Promise<void> {
    const e = this.entry(handle);
    const secrets = this.secrets();
    const payload: Payload = {
      ...this.base(e.workload, handle.instanceId, secrets),
      forced_by_revocation: auditJson(why, secrets),
    };
    const errors: RuntimeError[] = [];
    const stopped = await settle(() => this.runtime.stop(handle, graceMs));
    const stopPayload: Payload = stopped.ok
      ? { ...payload, evidence: evidenceForAudit(stopped.value, secrets) }
      : payload;
    await this.outcome(ChainKind.stop, stopPayload, stopped, secrets, errors);
    const r = await settle(() => this.runtime.unload(handle));
    if (r.ok) this.loaded.delete(handle.instanceId);
    await this.outcome(ChainKind.unload, payload, r, secrets, errors);
    done(r, errors);
  }

  /** The adapter's status of an instance (read-only: not gated, not chained). */
  status(handle: InstanceHandle): Promise<InstanceStatus> {
    return this.runtime.status(handle);
  }

  /** The last `lines` lines of an instance's output (not gated, not chained; its token redacted). */
  async logs(handle: InstanceHandle, lines: number): Promise<readonly string[]> {
    const out = await this.runtime.logs(handle, lines);
    const secrets = this.secrets();
    return secrets.length === 0 ? out : out.map((l) => redactSecrets(l, secrets));
  }

  private entry(handle: InstanceHandle): Entry {
    const e = this.loaded.get(handle.instanceId);
    if (e === undefined) {
      throw new RuntimeError('unknown_instance', `instance ${handle.instanceId} is not loaded on this host`, {
        field: 'instanceId',
      });
    }
    return e;
  }

  /** The ingest tokens of the known instances (plus one being loaded): redacted from all output. */
  private secrets(extra?: string): string[] {
    const out: string[] = [];
    for (const e of this.loaded.values()) if (e.token) out.push(e.token);
    if (extra) out.push(extra);
    return out;
  }

  /**
   * Asks the gate; returns on permit. A deny or defer (or a gate that cannot decide) rejects with
   * `governance`, after chaining a `workload.refuse` built from `refuse` (when given).
   */
  private async gated(
    action: string,
    workload: RuntimeWorkload,
    emulated: boolean,
    teardown: boolean,
    refuse: Payload | null,
    secrets: readonly string[],
  ): Promise<void> {
    let d: Decision;
    try {
      const ctx = gateContextFor(workload, {
        nodeTier: this.tier,
        network: this.runtime.networkExposure(),
        emulated,
      });
      d = teardown
        ? await this.gate.checkTeardown(this.agent, action, ctx)
        : await this.gate.check(this.agent, action, ctx);
    } catch (err) {
      throw new RuntimeError('governance', `${action}: the gate could not decide: ${messageOf(err)}`, {
        cause: err,
      });
    }
    if (d.verdict === 'permit') return;
    const error = new RuntimeError(
      'governance',
      d.verdict === 'defer' ? `${action} deferred to a human: ${d.reason}` : `${action} denied: ${d.reason}`,
    );
    if (refuse !== null) {
      const hash = (d as { event_hash?: unknown }).event_hash;
      const extra: Payload = { verdict: d.verdict, rule: auditText(d.rule, AUDIT_LIMITS.shortText) };
      if (typeof hash === 'string') extra.decision_event = auditText(hash, 128);
      await this.outcome(action, { ...refuse, ...extra }, { ok: false, error }, secrets, []);
    }
    throw error;
  }

  /** The adapter's console preemptions, each gated as `workload.stop`; the first denial rejects. */
  private async preemptionsPermitted(handle: InstanceHandle): Promise<Preempted[]> {
    const out: Preempted[] = [];
    for (const p of await this.runtime.consolePreemptions(handle)) {
      const known = p.instanceId === undefined ? undefined : this.loaded.get(p.instanceId);
      const workload = known?.workload ?? preemptionWorkload(p);
      const emulated = known?.emulated ?? false;
      try {
        await this.gated('workload.stop', workload, emulated, false, null, []);
      } catch (err) {
        throw new RuntimeError('governance', `console run needs ${p.workloadId} stopped: ${messageOf(err)}`, {
          cause: err,
        });
      }
      out.push({ p, workload, emulated });
    }
    return out;
  }

  private base(w: RuntimeWorkload, instanceId: string | null, secrets: readonly string[]): Payload {
    const t = (s: string): string => auditText(s, AUDIT_LIMITS.shortText, secrets);
    return {
      runtime: t(this.runtime.id),
      workload_id: t(w.id),
      version: t(w.version),
      instance_id: instanceId === null ? null : t(instanceId),
    };
  }

  private preemptPayload(
    p: Preemption,
    h: InstanceHandle,
    phase: string,
    secrets: readonly string[],
  ): Payload {
    const t = (s: string): string => auditText(String(s), AUDIT_LIMITS.shortText, secrets);
    return {
      runtime: t(this.runtime.id),
      workload_id: t(p.workloadId),
      version: t(p.version),
      phase,
      for_instance: t(h.instanceId),
    };
  }

  /**
   * Chains an outcome: `kind` with `outcome: ok`, or `workload.refuse` with `outcome: error`,
   * `failed_action: kind`, `error_code` and `reason`. A record the chain refuses is pushed to
   * `errors` when given, thrown otherwise.
   */
  private async outcome(
    kind: string,
    payload: Payload,
    r: Settled<unknown>,
    secrets: readonly string[],
    errors?: RuntimeError[],
  ): Promise<void> {
    if (r.ok) return this.record(kind, { ...payload, outcome: 'ok' }, secrets, errors);
    const refused: Payload = {
      ...payload,
      outcome: 'error',
      failed_action: kind,
      error_code: r.error.code,
      reason: auditText(r.error.message, AUDIT_LIMITS.reasonText, secrets),
    };
    return this.record(ChainKind.refuse, refused, secrets, errors);
  }

  /** Chains `error` as the refusal of `kind` and rejects with it. */
  private async refuseWith(
    kind: string,
    payload: Payload,
    error: RuntimeError,
    secrets: readonly string[],
  ): Promise<never> {
    await this.outcome(kind, payload, { ok: false, error }, secrets, []);
    throw error;
  }

  private async record(
    kind: string,
    payload: Payload,
    secrets: readonly string[],
    errors?: RuntimeError[],
  ): Promise<void> {
    try {
      await this.recorder.append(RUNTIME_CHAIN_SOURCE, kind, redactJson(payload, secrets));
    } catch (err) {
      const e = new RuntimeError('runtime', `the ${kind} record could not be chained: ${messageOf(err)}`, {
        cause: err,
      });
      if (errors === undefined) throw e;
      errors.push(e);
    }
  }
}

/** The workload a console preemption stands for when this host did not load it: a store pin. */
function preemptionWorkload(p: Preemption): RuntimeWorkload {
  const version = VERSION_RE.test(p.version) ? p.version : 'unknown';
  return workloadFromStorePin({ registry: p.registry, id: p.workloadId, version });
}

function checkTier(tier: NodeTier): NodeTier {
  if (!(NODE_TIERS as readonly unknown[]).includes(tier)) {
    throw new RuntimeError('invalid_config', `nodeTier must be one of ${NODE_TIERS.join(', ')}`, {
      field: 'nodeTier',
    });
  }
  return tier;
}

/** The adapter's RuntimeError as it is, anything else it threw as code `runtime`. */
function asRuntimeError(err: unknown): RuntimeError {
  if (err instanceof RuntimeError) return err;
  return new RuntimeError('runtime', messageOf(err), { cause: err });
}

/** An adapter call's result: its value, or its error as a RuntimeError. */
type Settled<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: RuntimeError };

async function settle<T>(call: () => Promise<T>): Promise<Settled<T>> {
  try {
    return { ok: true, value: await call() };
  } catch (err) {
    return { ok: false, error: asRuntimeError(err) };
  }
}

/**
 * The value of a transition whose outcome is chained: its own error first, then the first record
 * that could not be chained.
 */
function done<T>(r: Settled<T>, errors: readonly RuntimeError[]): T {
  if (!r.ok) throw r.error;
  if (errors[0] !== undefined) throw errors[0];
  return r.value;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
