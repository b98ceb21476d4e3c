/**
 * Schemas of what the operator commands print with `--json` (one JSON object per line on standard
 * output; errors on standard error). Each is the operator API's answer for the command's route, from
 * `@heddle/operator-api`; the CLI tests validate real outputs against them, so a change of shape is
 * caught. Objects are strict: an unexpected field is a failure.
 */

import { PLANE_EVENT_TYPES, type PlaneEventType } from '@heddle/control-plane';
import {
  AddOperatorAnswerSchema,
  AlertSchema,
  ApprovalViewSchema,
  DrainReportSchema,
  InstanceLogsSchema,
  InstanceStatusSchema,
  JobPlanSchema,
  JobRunSchema,
  JobStatusSchema,
  JobVersionSchema,
  NodeViewSchema,
  OperatorViewSchema,
  PlacementSchema,
  PlaceResultSchema,
  StopResultSchema,
  WhoAmISchema,
} from '@heddle/operator-api';
import { z } from 'zod';

const EVENT_ID = z.string().regex(/^[0-9a-f]{1,64}-(0|[1-9][0-9]{0,15})$/);

/** `heddle events --json`: one line per event (a plane event, or the stream's own `stream.open`/`stream.reset`). */
export const EventLineSchema = z.union([
  z.strictObject({
    id: EVENT_ID,
    type: z.string().refine(
      // cast: includes() of a list of literals takes any string; it answers whether it is one of them.
      (t) => PLANE_EVENT_TYPES.includes(t as PlaneEventType),
      'not an event type',
    ),
    at_ms: z.number().int().nonnegative(),
    data: z.record(z.string(), z.unknown()),
  }),
  z.strictObject({
    id: EVENT_ID,
    type: z.enum(['stream.open', 'stream.reset']),
    data: z.strictObject({ epoch: z.string(), last_id: EVENT_ID, requested: z.string().optional() }),
  }),
]);

/** `heddle node add|rm|pin --json`. */
export const NodeOutputSchema = z.strictObject({ node: NodeViewSchema });
/** `heddle node ls|refresh --json`. */
export const NodesOutputSchema = z.strictObject({ nodes: z.array(NodeViewSchema) });
/** `heddle start|unload --json`. */
export const PlacementOutputSchema = z.strictObject({ placement: PlacementSchema });

/** `heddle approvals show|approve|reject --json` (and `place --wait` of a held place). */
export const ApprovalOutputSchema = z.strictObject({ approval: ApprovalViewSchema });

/** Every failure with `--json`: one line on standard error. */
export const ErrorOutputSchema = z.strictObject({
  error: z.strictObject({
    code: z.string().regex(/^[a-z_]+$/),
    message: z.string().min(1),
    field: z.string().optional(),
    reasons: z.record(z.string(), z.string()).optional(),
    // A usage error from the parser: why (`unknown_flag`, ...) and the word as typed.
    reason: z
      .string()
      .regex(/^[a-z_]+$/)
      .optional(),
    token: z.string().optional(),
    // A file-system failure (disk_full, read_only_filesystem, permission_denied): the errno and path.
    errno: z.string().optional(),
    path: z.string().optional(),
  }),
});

/** The schema of each command's `--json` output, by command name. */
export const JSON_OUTPUTS: Readonly<Record<string, z.ZodType>> = {
  'node add': NodeOutputSchema,
  'node add-seed': NodeOutputSchema,
  'node ls': NodesOutputSchema,
  'node rm': NodeOutputSchema,
  'node pin': NodeOutputSchema,
  'node refresh': NodesOutputSchema,
  'node cordon': NodeOutputSchema,
  'node uncordon': NodeOutputSchema,
  'node drain': DrainReportSchema,
  'node label': NodeOutputSchema,
  place: PlaceResultSchema,
  ps: z.strictObject({ instances: z.array(PlacementSchema) }),
  alerts: z.strictObject({ alerts: z.array(AlertSchema) }),
  events: EventLineSchema,
  'alerts ack': z.strictObject({ alert: AlertSchema }),
  'approvals ls': z.strictObject({ approvals: z.array(ApprovalViewSchema) }),
  'approvals show': ApprovalOutputSchema,
  'approvals approve': ApprovalOutputSchema,
  'approvals reject': ApprovalOutputSchema,
  'job plan': JobPlanSchema,
  'job run': JobRunSchema,
  'job status': z.union([
    z.strictObject({ job: JobStatusSchema }),
    z.strictObject({ jobs: z.array(JobStatusSchema) }),
  ]),
  'job history': z.strictObject({ versions: z.array(JobVersionSchema) }),
  'job revert': JobRunSchema,
  'job stop': z.strictObject({ job: JobStatusSchema }),
  status: InstanceStatusSchema,
  logs: InstanceLogsSchema,
  start: PlacementOutputSchema,
  stop: StopResultSchema,
  unload: PlacementOutputSchema,
  'operator add': AddOperatorAnswerSchema,
  'operator ls': z.strictObject({ operators: z.array(OperatorViewSchema) }),
  'operator rm': z.strictObject({ operator: OperatorViewSchema }),
  whoami: WhoAmISchema,
};
