import { z } from 'zod';

/**
 * A request id: 1 to 128 characters of `[A-Za-z0-9._:-]`, starting with a letter or digit (a UUID
 * fits). It names one operator request in every log line it causes, from the CLI through the
 * controller to the host; it is never a secret and never decides anything.
 */
export const REQUEST_ID_RE: RegExp = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/** Schema of a request id ({@link REQUEST_ID_RE}). */
export const RequestIdSchema: z.ZodString = z
  .string()
  .regex(REQUEST_ID_RE, 'expected a request id ([A-Za-z0-9][A-Za-z0-9._:-]{0,127})');

/**
 * The protocol features a host may list in `advertisement.features` (docs/protocol.md 14.1):
 * `request_id`: it reads the optional `request_id` of a `workload.place` / `workload.load` body. A
 * controller sends an optional body field only to a host that lists its feature, since a host
 * refuses body fields it does not know.
 */
export const HOST_FEATURES: readonly ['request_id'] = Object.freeze(['request_id'] as const);

/** One of {@link HOST_FEATURES}. */
export type HostFeature = (typeof HOST_FEATURES)[number];
