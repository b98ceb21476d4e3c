import { ChainKind } from '@heddle/chain';
import type { JsonValue } from '@heddle/envelope';
import type { Decision, GateContext, NodeTier } from '@heddle/gate';
import type { InstanceHandle, InstanceStatus, RunEvidence, WorkloadRuntime } from '../contract.js';
import type { RuntimeError } from '../errors.js';
import {
  type HostContract,
  hostContractForAudit,
  type RuntimeWorkload,
  type WorkloadConfig,
} from '../workload.js';
import {
  AUDIT_LIMITS,
  admissionForAudit,
  auditJson,
  auditText,
  evidenceForAudit,
  redactEvidence,
} from './host-audit.js';
import { governedConsole } from './host-console.js';
import { HostGovernance, type Payload } from './host-governance.js';
import { redactSecrets } from './host-redact.js';
import { revocationTeardown } from './host-revocation.js';
import { watchInstanceRuns } from './host-runs.js';
import { done, settle } from './host-settle.js';

export { RUNTIME_CHAIN_SOURCE } from './host-governance.js';
export { RERUN_PHASE, RUN_EXIT_KIND } from './host-runs.js';

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
  readonly #gov: HostGovernance;

  /** A host governing `options.runtime` (`invalid_config` for a `nodeTier` that is not a tier). */
  constructor(options: WorkloadHostOptions) {
    this.#gov = new HostGovernance(options);
  }

  /** The adapter. */
  get adapter(): WorkloadRuntime {
    return this.#gov.runtime;
  }

  /** The tier this node is governed at right now. */
  get nodeTier(): NodeTier {
    return this.#gov.tier;
  }

  /**
   * Changes the governed tier (an operator demotion or promotion). Applies to the next gated call,
   * including calls on instances already placed. Throws `invalid_config` for a value that is not a tier.
   */
  setNodeTier(tier: NodeTier): void {
    this.#gov.tier = tier;
  }

  /** The workload an instance came from, if this host loaded or adopted it. */
  workloadFor(handle: InstanceHandle): RuntimeWorkload | undefined {
    return this.#gov.loaded.get(handle.instanceId)?.workload;
  }

  /** The instances this host loaded or adopted and has not unloaded. */
  instances(): HostedInstance[] {
    return [...this.#gov.loaded].map(([instanceId, e]) => ({
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
    const gov = this.#gov;
    const token = config.host.ingestToken;
    const secrets = gov.secrets(token);
    const admitted = await settle(() => gov.runtime.admit(workload));
    const admission = admitted.ok ? admitted.value : undefined;
    const emulated = admission?.emulated === true;
    const payload: Payload = {
      ...gov.base(workload, null, secrets),
      admission: admission === undefined ? null : admissionForAudit(admission, secrets),
      host_contract: auditJson(hostContractForAudit(config.host), secrets),
    };
    if (!admitted.ok) return gov.refuseWith(ChainKind.load, payload, admitted.error, secrets);
    if (workload.source.type === 'store_pin') {
      await gov.gated('workload.install', workload, emulated, false, payload, secrets);
    }
    await gov.gated('workload.load', workload, emulated, false, payload, secrets);
    const r = await settle(() => gov.runtime.load(workload, config));
    const errors: RuntimeError[] = [];
    if (r.ok) {
      const handle = r.value;
      gov.loaded.set(handle.instanceId, { workload, emulated, token });
      watchInstanceRuns(gov, handle);
      payload.instance_id = auditText(handle.instanceId, AUDIT_LIMITS.shortText, secrets);
      if (handle.storeInstalled === true) {
        const installed = {
          ...gov.base(workload, handle.instanceId, secrets),
          outcome: 'ok',
          source: 'store_pin',
        };
        await gov.record(ChainKind.install, installed, secrets, errors);
      }
    }
    await gov.outcome(ChainKind.load, payload, r, secrets, errors);
    return done(r, errors);
  }

  /**
   * Re-attaches an instance loaded before a restart (`WorkloadRuntime.adopt`), gated as
   * `workload.load` through the teardown check and chained as `workload.load` with phase
   * `readopted`. A no-op when the instance is already known. Pass the instance's host contract (at
   * least its `ingestToken`) so that the token stays redacted from everything chained and returned.
   */
  async adopt(
    handle: InstanceHandle,
    workload: RuntimeWorkload,
    host?: Pick<HostContract, 'ingestToken'>,
  ): Promise<void> {
    const gov = this.#gov;
    if (gov.loaded.has(handle.instanceId)) return;
    const token = host?.ingestToken;
    const secrets = gov.secrets(token);
    const payload: Payload = { ...gov.base(workload, handle.instanceId, secrets), phase: 'readopted' };
    await gov.gated('workload.load', workload, false, true, payload, secrets);
    const r = await settle(() => gov.runtime.adopt(handle, workload));
    if (r.ok) {
      gov.loaded.set(handle.instanceId, { workload, emulated: false, token });
      watchInstanceRuns(gov, handle);
    }
    const errors: RuntimeError[] = [];
    await gov.outcome(ChainKind.load, payload, r, secrets, errors);
    done(r, errors);
  }

  /** Gates `workload.start` and starts; chained as `workload.start`. */
  async start(handle: InstanceHandle): Promise<void> {
    const t = await this.#gov.begin(handle, 'workload.start', false);
    const r = await settle(() => this.#gov.runtime.start(handle));
    await this.#gov.finish(ChainKind.start, t, r);
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
  console(handle: InstanceHandle, command: string): Promise<RunEvidence> {
    return governedConsole(this.#gov, handle, command);
  }

  /** Gates `workload.stop` (teardown waiver) and stops; chained as `workload.stop` with the evidence. */
  async stop(handle: InstanceHandle, graceMs: number): Promise<RunEvidence> {
    const t = await this.#gov.begin(handle, 'workload.stop', true);
    const r = await settle(() => this.#gov.runtime.stop(handle, graceMs));
    if (r.ok) t.payload.evidence = evidenceForAudit(r.value, t.secrets);
    return redactEvidence(await this.#gov.finish(ChainKind.stop, t, r), t.secrets);
  }

  /** Gates `workload.unload` (teardown waiver) and unloads; chained as `workload.unload`. */
  async unload(handle: InstanceHandle): Promise<void> {
    const t = await this.#gov.begin(handle, 'workload.unload', true);
    const r = await settle(() => this.#gov.runtime.unload(handle));
    if (r.ok) this.#gov.loaded.delete(handle.instanceId);
    await this.#gov.finish(ChainKind.unload, t, r);
  }

  /**
   * Stops and unloads an instance because its package, signer or artifact was revoked. Not gated:
   * the applied revocation is the authority, so enforcement cannot depend on a stop or unload permit.
   * `why` (what was revoked, bounded) is chained as `forced_by_revocation` on both records. The unload
   * is attempted even when the stop fails (the instance may already have exited); the call rejects
   * with the unload's error, if any.
   */
  revokeTeardown(handle: InstanceHandle, graceMs: number, why: JsonValue): Promise<void> {
    return revocationTeardown(this.#gov, handle, graceMs, why);
  }

  /** The adapter's status of an instance (read-only: not gated, not chained). */
  status(handle: InstanceHandle): Promise<InstanceStatus> {
    return this.#gov.runtime.status(handle);
  }

  /** The last `lines` lines of an instance's output (not gated, not chained; its token redacted). */
  async logs(handle: InstanceHandle, lines: number): Promise<readonly string[]> {
    const out = await this.#gov.runtime.logs(handle, lines);
    const secrets = this.#gov.secrets();
    return secrets.length === 0 ? out : out.map((l) => redactSecrets(l, secrets));
  }
}
