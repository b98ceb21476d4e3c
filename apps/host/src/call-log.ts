import type { Logger } from '@heddle/cli-kit';
import type { HostCallEvent } from '@heddle/host-service';
import { mutates } from '@heddle/protocol';

/**
 * Logs one answered request as a `call` line (docs/host.md, "Logs"): at `info` for a method that
 * changes something (place, load, start, stop, unload, revoke) and for every refusal, at `debug` for
 * an accepted read (describe, status, logs: a controller sends them every refresh). The line carries
 * the operator's `request_id` when the controller passed one on.
 */
export function logCall(log: Logger, e: HostCallEvent): void {
  const changes = mutates(e.method);
  const level = e.outcome === 'refused' || changes ? 'info' : 'debug';
  if (!log.enabled(level)) return;
  log[level]('call', {
    method: e.method,
    outcome: e.outcome,
    code: e.code ?? undefined,
    ms: Math.round(e.ms),
    authenticated: e.authenticated,
    requester: e.requester ?? undefined,
    decision_id: e.decision_id ?? undefined,
    request_id: e.request_id ?? undefined,
    instance_id: e.instance_id ?? undefined,
  });
}
