import { ChainKind } from '@heddle/chain';
import { VERSION_RE } from '@heddle/package';
import type { InstanceHandle, Preemption, RunEvidence } from '../contract.js';
import { messageOf, RuntimeError } from '../errors.js';
import { type RuntimeWorkload, workloadFromStorePin } from '../workload.js';
import { auditList, evidenceForAudit, redactEvidence } from './host-audit.js';
import type { HostGovernance } from './host-governance.js';
import { done, type Settled, settle } from './host-settle.js';

interface Preempted {
  readonly p: Preemption;
  readonly workload: RuntimeWorkload;
  readonly emulated: boolean;
}

/**
 * A governed console run (see `WorkloadHost.console`): gated and chained as `workload.start` with
 * phase `console`. The adapter's console preemptions are each gated as `workload.stop` first (any
 * denial refuses the run, nothing stopped), then preempted and chained as `workload.stop` with phase
 * `preempt-for-console`; after the run each is gated as `workload.start`, resumed and chained with
 * phase `resume-after-console` (a denied one stays stopped). The console record comes last, with
 * `preempted`, `resumed` and the evidence, whose `stoppedForConsole` lists the preempted workloads.
 */
export async function governedConsole(
  gov: HostGovernance,
  handle: InstanceHandle,
  command: string,
): Promise<RunEvidence> {
  const { secrets, payload } = await gov.begin(handle, 'workload.start', false, { phase: 'console' });
  const permitted = await settle(() => preemptionsPermitted(gov, handle));
  if (!permitted.ok) return gov.refuseWith(ChainKind.start, payload, permitted.error, secrets);
  const errors: RuntimeError[] = [];
  const stopped: Preempted[] = [];
  let failed: Settled<never> | undefined;
  for (const x of permitted.value) {
    const r = await settle(() => gov.runtime.preempt(x.p));
    const pp = gov.preemptPayload(x.p, handle, 'preempt-for-console', secrets);
    await gov.outcome(ChainKind.stop, pp, r, secrets, errors);
    if (!r.ok) {
      failed = r;
      break;
    }
    stopped.push(x);
  }
  const run = failed ?? (await settle(() => gov.runtime.console(handle, command)));
  const resumed: string[] = [];
  for (const x of stopped) {
    const rp = gov.preemptPayload(x.p, handle, 'resume-after-console', secrets);
    try {
      await gov.gated('workload.start', x.workload, x.emulated, false, rp, secrets);
    } catch {
      continue; // the denial is chained; the workload stays stopped
    }
    const r = await settle(() => gov.runtime.resume(x.p));
    await gov.outcome(ChainKind.start, rp, r, secrets, errors);
    if (r.ok) resumed.push(x.p.workloadId);
  }
  const ids = stopped.map((x) => x.p.workloadId);
  payload.preempted = auditList(ids, secrets);
  payload.resumed = auditList(resumed, secrets);
  const result: Settled<RunEvidence> = run.ok
    ? { ok: true, value: { ...run.value, stoppedForConsole: ids } }
    : run;
  if (result.ok) payload.evidence = evidenceForAudit(result.value, secrets);
  await gov.outcome(ChainKind.start, payload, result, secrets, errors);
  return redactEvidence(done(result, errors), secrets);
}

/** The adapter's console preemptions, each gated as `workload.stop`; the first denial rejects. */
async function preemptionsPermitted(gov: HostGovernance, handle: InstanceHandle): Promise<Preempted[]> {
  const out: Preempted[] = [];
  for (const p of await gov.runtime.consolePreemptions(handle)) {
    const known = p.instanceId === undefined ? undefined : gov.loaded.get(p.instanceId);
    const workload = known?.workload ?? preemptionWorkload(p);
    const emulated = known?.emulated ?? false;
    try {
      await gov.gated('workload.stop', workload, emulated, false, null, []);
    } catch (err) {
      throw new RuntimeError('governance', `console run needs ${p.workloadId} stopped: ${messageOf(err)}`, {
        cause: err,
      });
    }
    out.push({ p, workload, emulated });
  }
  return out;
}

/**
 * The workload a console preemption stands for when this host did not load it: a store pin, marked
 * unattested when the operator never pinned it (then gated at trust `unsigned`).
 */
function preemptionWorkload(p: Preemption): RuntimeWorkload {
  const version = VERSION_RE.test(p.version) ? p.version : 'unknown';
  const w = workloadFromStorePin({ registry: p.registry, id: p.workloadId, version });
  if (p.operatorPinned !== false || w.source.type !== 'store_pin') return w;
  return { ...w, source: { ...w.source, unattested: true } };
}
