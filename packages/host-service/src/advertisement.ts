import { CTL_METHODS, CTL_VERSION, type JsonValue } from '@heddle/envelope';

/** The service name a host advertises. */
export const WORKLOAD_HOST_SERVICE = 'workload-host';

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
  /**
   * Its controller lease, or null without one: `lease_ms`, and `stops_within_ms`, how long after the
   * lease expired (on its own clock, counted from the issue time of the last controller request it
   * verified) it has stopped the continuous instances controllers placed while it runs (a supervisor
   * pass and the stop grace).
   */
  readonly lease: { readonly lease_ms: number; readonly stops_within_ms: number } | null;
}

/** The advertisement of a host with `routes`, reachable at `address`. */
export function workloadHostAdvertisement(
  nodeId: string,
  routes: Iterable<string>,
  address: string | undefined,
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
    lease:
      ad.lease === null ? null : { lease_ms: ad.lease.lease_ms, stops_within_ms: ad.lease.stops_within_ms },
  };
}
