import { ChainKind, ChainSource } from '@heddle/chain';
import type { JsonValue } from '@heddle/envelope';
import { type Decision, NODE_TIERS, type NodeTier } from '@heddle/gate';
import type { InstanceHandle, Preemption, WorkloadRuntime } from '../contract.js';
import { messageOf, RuntimeError } from '../errors.js';
import { gateContextFor } from '../host-context.js';
import type { RuntimeWorkload } from '../workload.js';
import { AUDIT_LIMITS, auditText } from './host-audit.js';
import { redactJson } from './host-redact.js';
import { done, type Settled } from './host-settle.js';
import type { HostGate, HostRecorder, WorkloadHostOptions } from './workload-host.js';

/** Chain source of the WorkloadHost's lifecycle outcomes (the gate chains its decisions as `workload`). */
export const RUNTIME_CHAIN_SOURCE: 'workload.runtime' = ChainSource.runtime;

/** A chained payload. */
export type Payload = { [key: string]: JsonValue };

/** An instance a WorkloadHost loaded or adopted. */
export interface HostEntry {
  readonly workload: RuntimeWorkload;
  readonly emulated: boolean;
  /** The instance's ingest token: kept only to redact it from what is chained and returned. */
  readonly token: string | undefined;
}

/** A gated transition of a known instance, begun by {@link HostGovernance.begin}. */
export interface Transition {
  readonly entry: HostEntry;
  /** The tokens redacted from everything chained and returned. */
  readonly secrets: readonly string[];
  /** The payload its outcome is chained with (adds such as `evidence` go here before finishing). */
  readonly payload: Payload;
}

/**
 * The WorkloadHost's governance state and steps: the node tier, the instances it holds, gate checks
 * (a refusal chained as `workload.refuse`), and chaining outcomes with every token redacted.
 */
export class HostGovernance {
  readonly runtime: WorkloadRuntime;
  readonly loaded: Map<string, HostEntry> = new Map();
  readonly #gate: HostGate;
  readonly #recorder: HostRecorder;
  readonly #agent: string;
  #tier: NodeTier;

  /** Governance of `options.runtime` at `options.nodeTier`. */
  constructor(options: WorkloadHostOptions) {
    this.runtime = options.runtime;
    this.#gate = options.gate;
    this.#recorder = options.recorder;
    this.#agent = options.agent;
    this.#tier = checkTier(options.nodeTier);
  }

  /** The tier gated calls are made at. */
  get tier(): NodeTier {
    return this.#tier;
  }

  /** Changes the tier; `invalid_config` for a value that is not a tier. */
  set tier(tier: NodeTier) {
    this.#tier = checkTier(tier);
  }

  /** The entry of a handle; `unknown_instance` when this host did not load or adopt it. */
  entry(handle: InstanceHandle): HostEntry {
    const e = this.loaded.get(handle.instanceId);
    if (e === undefined) {
      throw new RuntimeError('unknown_instance', `instance ${handle.instanceId} is not loaded on this host`, {
        field: 'instanceId',
      });
    }
    return e;
  }

  /** The ingest tokens of the known instances (plus one being loaded): redacted from all output. */
  secrets(extra?: string): string[] {
    const out: string[] = [];
    for (const e of this.loaded.values()) if (e.token) out.push(e.token);
    if (extra) out.push(extra);
    return out;
  }

  /** The payload every record of an instance starts with. */
  base(w: RuntimeWorkload, instanceId: string | null, secrets: readonly string[]): Payload {
    const t = (s: string): string => auditText(s, AUDIT_LIMITS.shortText, secrets);
    return {
      runtime: t(this.runtime.id),
      workload_id: t(w.id),
      version: t(w.version),
      instance_id: instanceId === null ? null : t(instanceId),
    };
  }

  /** The payload of a preemption (or resumption) record for a console run of `h`. */
  preemptPayload(p: Preemption, h: InstanceHandle, phase: string, secrets: readonly string[]): Payload {
    const t = (s: string): string => auditText(String(s), AUDIT_LIMITS.shortText, secrets);
    return {
      runtime: t(this.runtime.id),
      workload_id: t(p.workloadId),
      version: t(p.version),
      phase,
      for_instance: t(h.instanceId),
      operator_pinned: p.operatorPinned !== false,
    };
  }

  /**
   * Begins a transition of a known instance: looks it up, then gates `action` (`teardown` uses the
   * gate's teardown waiver). The payload is the instance's base plus `extra`.
   */
  async begin(
    handle: InstanceHandle,
    action: string,
    teardown: boolean,
    extra?: Payload,
  ): Promise<Transition> {
    const entry = this.entry(handle);
    const secrets = this.secrets();
    const payload: Payload = { ...this.base(entry.workload, handle.instanceId, secrets), ...extra };
    await this.gated(action, entry.workload, entry.emulated, teardown, payload, secrets);
    return { entry, secrets, payload };
  }

  /** Chains the outcome of a transition as `kind` and returns its value (see {@link done}). */
  async finish<T>(kind: string, t: Transition, r: Settled<T>): Promise<T> {
    const errors: RuntimeError[] = [];
    await this.outcome(kind, t.payload, r, t.secrets, errors);
    return done(r, errors);
  }

  /**
   * Asks the gate; returns on permit. A deny or defer (or a gate that cannot decide) rejects with
   * `governance`, after chaining a `workload.refuse` built from `refuse` (when given).
   */
  async gated(
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
        nodeTier: this.#tier,
        network: this.runtime.networkExposure(),
        emulated,
      });
      d = teardown
        ? await this.#gate.checkTeardown(this.#agent, action, ctx)
        : await this.#gate.check(this.#agent, action, ctx);
    } catch (err) {
      const error = new RuntimeError(
        'governance',
        `${action}: the gate could not decide: ${messageOf(err)}`,
        {
          cause: err,
        },
      );
      // A gate that throws still leaves a record: chained as a refusal before rethrowing.
      if (refuse !== null) {
        await this.outcome(action, { ...refuse, verdict: 'error' }, { ok: false, error }, secrets, []);
      }
      throw error;
    }
    if (d.verdict === 'permit') return;
    const error = new RuntimeError(
      'governance',
      d.verdict === 'defer' ? `${action} deferred to a human: ${d.reason}` : `${action} denied: ${d.reason}`,
    );
    if (refuse !== null) {
      // A gate that chains its decisions (`Gate` of @heddle/gate) adds the decision record's hash.
      const hash = 'event_hash' in d ? d.event_hash : undefined;
      const extra: Payload = { verdict: d.verdict, rule: auditText(d.rule, AUDIT_LIMITS.shortText) };
      if (typeof hash === 'string') extra.decision_event = auditText(hash, 128);
      await this.outcome(action, { ...refuse, ...extra }, { ok: false, error }, secrets, []);
    }
    throw error;
  }

  /**
   * Chains an outcome: `kind` with `outcome: ok`, or `workload.refuse` with `outcome: error`,
   * `failed_action: kind`, `error_code` and `reason`. A record the chain refuses is pushed to
   * `errors` when given, thrown otherwise.
   */
  async outcome(
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
  async refuseWith(
    kind: string,
    payload: Payload,
    error: RuntimeError,
    secrets: readonly string[],
  ): Promise<never> {
    await this.outcome(kind, payload, { ok: false, error }, secrets, []);
    throw error;
  }

  /** Chains one record (tokens redacted); a failure is pushed to `errors` when given, thrown otherwise. */
  async record(
    kind: string,
    payload: Payload,
    secrets: readonly string[],
    errors?: RuntimeError[],
  ): Promise<void> {
    try {
      await this.#recorder.append(RUNTIME_CHAIN_SOURCE, kind, redactJson(payload, secrets));
    } catch (err) {
      const e = new RuntimeError('runtime', `the ${kind} record could not be chained: ${messageOf(err)}`, {
        cause: err,
      });
      if (errors === undefined) throw e;
      errors.push(e);
    }
  }
}

function checkTier(tier: NodeTier): NodeTier {
  if (!NODE_TIERS.includes(tier)) {
    throw new RuntimeError('invalid_config', `nodeTier must be one of ${NODE_TIERS.join(', ')}`, {
      field: 'nodeTier',
    });
  }
  return tier;
}
