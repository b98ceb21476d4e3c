import type { Logger } from '@heddle/cli-kit';
import type { SupervisorEvent } from '@heddle/host-service';

/** The log message and level of each supervisor event (docs/host.md, "Logs"). */
const LINES: Readonly<Record<SupervisorEvent['type'], readonly ['info' | 'warn' | 'error', string]>> = {
  unhealthy: ['warn', 'supervisor: instance unhealthy'],
  restart_scheduled: ['info', 'supervisor: restart scheduled'],
  restarted: ['info', 'supervisor: instance restarted'],
  restart_failed: ['warn', 'supervisor: restart failed'],
  failed: ['error', 'supervisor: instance failed'],
  finished: ['info', 'supervisor: run finished'],
  lease_stopped: ['warn', 'controller lease expired: instance stopped'],
};

/** Logs one supervisor event as a JSON line: `instance_id`, `reason`, `restarts` and `delay_ms` when set. */
export function logSupervision(log: Logger, e: SupervisorEvent): void {
  const [level, msg] = LINES[e.type];
  log[level](msg, {
    instance_id: e.instanceId,
    reason: e.reason,
    restarts: e.restarts,
    ...(e.delayMs === undefined ? {} : { delay_ms: e.delayMs }),
  });
}
