import {
  CTL_METHODS,
  CTL_VERSION,
  type DescribeAnswer,
  HOST_FEATURES,
  type HostFeature,
  type HostSoftware,
  WORKLOAD_HOST_SERVICE,
  type WorkloadHostAdvertisement,
} from '@heddle/protocol';
import { DEFAULT_MAX_CALLS_PER_SESSION } from '@heddle/wire';

/** What {@link workloadHostAdvertisement} advertises. */
export interface AdvertisementOptions {
  /** The node id of the host. */
  readonly nodeId: string;
  /** The routes it has an adapter for (sorted in the advertisement). */
  readonly routes: Iterable<string>;
  /** The address controllers reach it at (`ws://...`, `wss://...`); none when absent. */
  readonly address?: string;
  /** The software it runs; none when absent. */
  readonly software?: HostSoftware;
  /** The most calls one session may have open at once (default the wire's, 8). */
  readonly maxCallsPerSession?: number;
  /** Its controller lease; none when absent. */
  readonly lease?: { readonly lease_ms: number; readonly stops_within_ms: number };
  /** The optional protocol features it reads (default all of `HOST_FEATURES`). */
  readonly features?: readonly HostFeature[];
  /** The host's clock now (Unix ms), advertised as `clock_ms`; null when absent. */
  readonly clockMs?: number;
}

/** The `workload-host` advertisement of a host (the `advertisement` of a describe answer). */
export function workloadHostAdvertisement(options: AdvertisementOptions): WorkloadHostAdvertisement {
  const { software, lease } = options;
  return {
    service: WORKLOAD_HOST_SERVICE,
    version: CTL_VERSION,
    node_id: options.nodeId,
    methods: [...CTL_METHODS],
    routes: [...options.routes].sort(),
    address: options.address ?? null,
    software: software === undefined ? null : { name: software.name, version: software.version },
    limits: { max_calls_per_session: options.maxCallsPerSession ?? DEFAULT_MAX_CALLS_PER_SESSION },
    lease: lease === undefined ? null : { lease_ms: lease.lease_ms, stops_within_ms: lease.stops_within_ms },
    features: [...(options.features ?? HOST_FEATURES)],
    clock_ms: options.clockMs ?? null,
  };
}

/** The answer of `workload.describe`: the node's signed facts and its advertisement. */
export function describeAnswer(
  facts: { readonly payload: string; readonly public_key: string; readonly signature: string },
  advertisement: WorkloadHostAdvertisement,
): DescribeAnswer {
  return {
    facts: { payload: facts.payload, public_key: facts.public_key, signature: facts.signature },
    advertisement,
  };
}
