import { ChainKind } from '@heddle/chain';
import type { JsonValue } from '@heddle/envelope';
import type { InstanceHandle } from '../contract.js';
import type { RuntimeError } from '../errors.js';
import { auditJson, evidenceForAudit } from './host-audit.js';
import type { HostGovernance, Payload } from './host-governance.js';
import { done, settle } from './host-settle.js';

/**
 * Stops and unloads an instance because its package, signer or artifact was revoked (see
 * `WorkloadHost.revokeTeardown`). Not gated; `why` is chained as `forced_by_revocation` on the
 * `workload.stop` and `workload.unload` records. The unload is attempted even when the stop fails;
 * rejects with the unload's error, then the first record that could not be chained.
 */
export async function revocationTeardown(
  gov: HostGovernance,
  handle: InstanceHandle,
  graceMs: number,
  why: JsonValue,
): Promise<void> {
  const e = gov.entry(handle);
  const secrets = gov.secrets();
  const payload: Payload = {
    ...gov.base(e.workload, handle.instanceId, secrets),
    forced_by_revocation: auditJson(why, secrets),
  };
  const errors: RuntimeError[] = [];
  const stopped = await settle(() => gov.runtime.stop(handle, graceMs));
  const stopPayload: Payload = stopped.ok
    ? { ...payload, evidence: evidenceForAudit(stopped.value, secrets) }
    : payload;
  await gov.outcome(ChainKind.stop, stopPayload, stopped, secrets, errors);
  const r = await settle(() => gov.runtime.unload(handle));
  if (r.ok) gov.loaded.delete(handle.instanceId);
  await gov.outcome(ChainKind.unload, payload, r, secrets, errors);
  done(r, errors);
}
