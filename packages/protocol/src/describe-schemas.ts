/** The body and answer of `workload.describe`: signed node facts and the host's advertisement (section 14.1). */
import { SignedNodeFactsSchema } from '@heddle/placement';
import { z } from 'zod';
import { CountSchema, NodeIdSchema } from './body-parts.js';
import { CTL_METHODS } from './methods.js';

/** The service name a host advertises. */
export const WORKLOAD_HOST_SERVICE = 'workload-host';

/** Longest lease (and stop window) a host may advertise: one day in ms. */
export const MAX_ADVERTISED_LEASE_MS = 86_400_000;

/** Body of `workload.describe`: `{}` (fields are ignored). */
export type DescribeBody = Record<string, never>;

/** Schema of {@link DescribeBody}: any object, its fields dropped (docs/protocol.md 14.1). */
export const DescribeBodySchema: z.ZodType<DescribeBody> = z.object({}).transform(() => ({}));

/** The software a host runs, as it reports it (`heddle-host`, `0.1.0`). */
export type HostSoftware = {
  /** The program: `[a-z0-9][a-z0-9._-]{0,63}`. */
  readonly name: string;
  /** Its version: `[0-9A-Za-z][0-9A-Za-z.+-]{0,63}`. */
  readonly version: string;
};

/** Schema of a {@link HostSoftware}. */
export const HostSoftwareSchema: z.ZodType<HostSoftware> = z.object({
  name: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'expected [a-z0-9][a-z0-9._-]{0,63}'),
  version: z.string().regex(/^[0-9A-Za-z][0-9A-Za-z.+-]{0,63}$/, 'expected [0-9A-Za-z][0-9A-Za-z.+-]{0,63}'),
});

/** What a host says about its `workload-host` service in `describe`, next to its signed facts. */
export type WorkloadHostAdvertisement = {
  /** Always {@link WORKLOAD_HOST_SERVICE}. */
  readonly service: string;
  /** The control protocol version it speaks. */
  readonly version: number;
  /** The node id of the host. */
  readonly node_id: string;
  /** The methods it answers. */
  readonly methods: string[];
  /** The routes it has an adapter for (`native`, `wasi`, `container`), sorted. */
  readonly routes: string[];
  /** The address controllers reach it at (`ws://...`, `wss://...`), or null. */
  readonly address: string | null;
  /**
   * The software it runs, or null. Informational: a value that does not fit {@link HostSoftwareSchema},
   * or none at all (a host from before the field), reads as null.
   */
  readonly software: HostSoftware | null;
  /** `max_calls_per_session`: the most calls one session may have open at once. */
  readonly limits: { readonly max_calls_per_session: number };
  /** Its controller lease, or null without one (docs/lifecycle.md). */
  readonly lease: { readonly lease_ms: number; readonly stops_within_ms: number } | null;
  /**
   * The optional protocol features it reads (`HOST_FEATURES`: `request_id`). Read leniently: absent
   * (a host from before the field) or not a list of short names reads as `[]`; unknown names are kept.
   */
  readonly features: string[];
  /**
   * The host's clock (Unix ms) when it answered, or null (a host from before the field, or one that
   * does not say). A controller measures the host's clock offset from it (`clockOffset`): read
   * leniently, like `software`.
   */
  readonly clock_ms: number | null;
};

const LeaseMs = CountSchema.max(MAX_ADVERTISED_LEASE_MS);

/** Schema of a {@link WorkloadHostAdvertisement}; fields it does not know are dropped. */
export const WorkloadHostAdvertisementSchema: z.ZodType<WorkloadHostAdvertisement> = z.object({
  service: z.literal(WORKLOAD_HOST_SERVICE),
  version: z.int().min(1),
  node_id: NodeIdSchema,
  methods: z.array(z.string().min(1).max(128)).max(CTL_METHODS.length * 4),
  routes: z.array(z.string().regex(/^[a-z.]{1,32}$/, 'expected a route name')).max(64),
  address: z.string().max(2048).nullable(),
  software: HostSoftwareSchema.nullable().default(null).catch(null),
  limits: z.object({ max_calls_per_session: z.int().min(1) }),
  lease: z.object({ lease_ms: LeaseMs, stops_within_ms: LeaseMs }).nullable(),
  features: z
    .array(z.string().regex(/^[a-z][a-z0-9_.]{0,63}$/))
    .max(64)
    .default([])
    .catch([]),
  clock_ms: z.int().nonnegative().max(Number.MAX_SAFE_INTEGER).nullable().default(null).catch(null),
});

/** What `workload.describe` answers. */
export type DescribeAnswer = {
  /** The node's signed facts (docs/placement.md); the controller verifies them with the node's key. */
  readonly facts: { readonly payload: string; readonly public_key: string; readonly signature: string };
  readonly advertisement: WorkloadHostAdvertisement;
};

/** Schema of a {@link DescribeAnswer}. */
export const DescribeAnswerSchema: z.ZodType<DescribeAnswer> = z.object({
  facts: SignedNodeFactsSchema,
  advertisement: WorkloadHostAdvertisementSchema,
});
