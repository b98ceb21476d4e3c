import type { JsonValue } from '@heddle/envelope';
import { CTL_METHODS, CTL_VERSION } from '@heddle/protocol';
import { DEFAULT_MAX_CALLS_PER_SESSION } from '@heddle/wire';

/** The service name a host advertises. */
export const WORKLOAD_HOST_SERVICE = 'workload-host';

/** The software a host runs, as it reports it in `describe` (`heddle-host`, `0.1.0`). */
export interface HostSoftware {
  /** The program (`heddle-host`): `[a-z0-9][a-z0-9._-]{0,63}`. */
  readonly name: string;
  /** Its version (`0.1.0`): `[0-9A-Za-z][0-9A-Za-z.+-]{0,63}`. */
  readonly version: string;
}

/** What a host says about its `workload-host` service in `describe` (next to its signed facts). */
export interface WorkloadHostAdvertisement {
  /** Always {@link WORKLOAD_HOST_SERVICE}. */
  readonly service: string;
  /** The control protocol version it speaks. */
  readonly version: number;
  /** The node id of the host. */
  readonly node_id: string;
  /** The methods it answers. */
  readonly methods: readonly string[];
  /** The routes it has an adapter for (`native`, `wasi`, `container`), sorted. */
  readonly routes: readonly string[];
  /** The address controllers reach it at (`ws://...`, `wss://...`), when configured. */
  readonly address: string | null;
  /** The software it runs, when its program said (null otherwise). */
  readonly software: HostSoftware | null;
  /**
   * The transport limits a controller must respect: `max_calls_per_session`, the most calls one
   * session may have open at once (one more closes the session with 4003).
   */
  readonly limits: { readonly max_calls_per_session: number };
  /**
   * Its controller lease, or null without one: `lease_ms`, and `stops_within_ms`, how long after the
   * lease expired (on its own clock, counted from the issue time of the last controller request it
   * verified) it has stopped the continuous instances controllers placed while it runs (a supervisor
   * pass and the stop grace).
   */
  readonly lease: { readonly lease_ms: number; readonly stops_within_ms: number } | null;
}

/** The advertisement of a host with `routes`, reachable at `address`, running `software`. */
export function workloadHostAdvertisement(
  nodeId: string,
  routes: Iterable<string>,
  address: string | undefined,
  software?: HostSoftware,
  maxCallsPerSession: number = DEFAULT_MAX_CALLS_PER_SESSION,
  lease: WorkloadHostAdvertisement['lease'] = null,
): WorkloadHostAdvertisement {
  return {
    lease,
    service: WORKLOAD_HOST_SERVICE,
    version: CTL_VERSION,
    node_id: nodeId,
    methods: [...CTL_METHODS],
    routes: [...routes].sort(),
    address: address ?? null,
    software: software === undefined ? null : { name: software.name, version: software.version },
    limits: { max_calls_per_session: maxCallsPerSession },
  };
}

/** The advertisement as JSON. */
export function advertisementJson(ad: WorkloadHostAdvertisement): { [key: string]: JsonValue } {
  return {
    service: ad.service,
    version: ad.version,
    node_id: ad.node_id,
    methods: [...ad.methods],
    routes: [...ad.routes],
    address: ad.address,
    software: ad.software === null ? null : { name: ad.software.name, version: ad.software.version },
    limits: { max_calls_per_session: ad.limits.max_calls_per_session },
    lease:
      ad.lease === null ? null : { lease_ms: ad.lease.lease_ms, stops_within_ms: ad.lease.stops_within_ms },
  };
}
