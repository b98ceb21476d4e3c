import { connect } from 'node:net';
import type { PlacedInstance } from './instance-record.js';

/**
 * Whether a listener instance whose process runs is ready to serve (true) or not (false). A probe
 * that rejects counts as not ready. It must settle on its own within a few seconds.
 */
export type ReadinessProbe = (p: PlacedInstance) => Promise<boolean>;

/** How long the built-in TCP probe waits for a connection: 1 s. */
export const TCP_PROBE_TIMEOUT_MS = 1_000;

/**
 * The TCP port the built-in readiness probe checks for `p`: its `port` config value when it is an
 * integer 1..65535. A cog receives its config values as `--<field> <value>` arguments, and a listener
 * that serves on a port is configured with one; nothing else tells the host where it listens.
 */
export function readinessPort(p: PlacedInstance): number | undefined {
  const port = p.values.port;
  return typeof port === 'number' && Number.isInteger(port) && port >= 1 && port <= 65_535 ? port : undefined;
}

/** True when a TCP connection to `host:port` is accepted within `timeoutMs` (it is closed at once). */
export function tcpAccepts(
  port: number,
  host: string = '127.0.0.1',
  timeoutMs: number = TCP_PROBE_TIMEOUT_MS,
): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host });
    const done = (ok: boolean): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * The probe the supervisor uses for `p`, if any: only listener instances are probed; `custom` (the
 * HostService `readiness` option) when given; `false` turns probing off; otherwise the built-in TCP
 * probe of 127.0.0.1:`port` for an instance with a {@link readinessPort}, none for the rest.
 */
export function readinessProbeFor(
  p: PlacedInstance,
  custom: ReadinessProbe | false | undefined,
): ReadinessProbe | undefined {
  if (p.mode.type !== 'listener' || custom === false) return undefined;
  if (custom !== undefined) return custom;
  const port = readinessPort(p);
  return port === undefined ? undefined : () => tcpAccepts(port);
}
