import { ChainKind } from '@heddle/chain';
import type { InstanceHandle } from '../contract.js';
import { evidenceForAudit } from './host-audit.js';
import type { HostGovernance, Payload } from './host-governance.js';

/** Chain kind of the record of a run that ended by itself (source `workload.runtime`). */
export const RUN_EXIT_KIND: 'workload.exit' = 'workload.exit';

/** The `phase` of the `workload.start` records of interval re-runs. */
export const RERUN_PHASE: 'interval' = 'interval';

/**
 * Installs the WorkloadHost's run hooks on an instance it loaded or adopted (a no-op for an adapter
 * without `watchRuns`):
 *
 * - every run the adapter starts by itself is gated as `workload.start` at the node's tier **now**
 *   (the gate chains its decision) and chained as `workload.start` with `phase: "interval"` and `run`
 *   before it starts; a denial (or a record that cannot be chained) refuses the run, chained as
 *   `workload.refuse` with the same `phase` and `run`, and the instance goes `failed`;
 * - every run that ends without a stop is chained as `workload.exit` with `run` and its evidence
 *   (bounded like a stop's).
 */
export function watchInstanceRuns(gov: HostGovernance, handle: InstanceHandle): void {
  const runtime = gov.runtime;
  if (runtime.watchRuns === undefined) return;
  runtime.watchRuns(handle, {
    beforeRun: async (run) => {
      const t = await gov.begin(handle, 'workload.start', false, { phase: RERUN_PHASE, run });
      await gov.record(ChainKind.start, { ...t.payload, outcome: 'ok' }, t.secrets);
    },
    runEnded: (run, evidence) => {
      const entry = gov.loaded.get(handle.instanceId);
      if (entry === undefined) return;
      const secrets = gov.secrets();
      const payload: Payload = {
        ...gov.base(entry.workload, handle.instanceId, secrets),
        run,
        outcome: 'ok',
        evidence: evidenceForAudit(evidence, secrets),
      };
      // Best effort: a run that already ended cannot be refused; a chain failure is not an exit's error.
      void gov.record(RUN_EXIT_KIND, payload, secrets, []);
    },
  });
}
