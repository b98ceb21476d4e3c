/**
 * The operator API's route table: one entry per route with its method, path, query, body and answer
 * schemas. The server adapter validates what it receives with it and the client validates what it is
 * answered with it, so the two sides cannot drift apart.
 */
import type {
  AlertRecord,
  ApprovalView,
  DrainReport,
  NodeView,
  PlaceOrderInput,
  RevocationPushReport,
  SettleReport,
  UnsettledRecord,
} from '@heddle/control-plane';
import type { RevocationListFile } from '@heddle/package';
import { z } from 'zod';
import type {
  ApiHealth,
  InstanceLogs,
  InstanceStatus,
  PlaceAnswer,
  Placement,
  RevocationStatus,
  StopResult,
} from './answer-types.js';
import {
  AlertSchema,
  ApprovalViewSchema,
  DrainReportSchema,
  HealthSchema,
  InstanceLogsSchema,
  InstanceStatusSchema,
  NodeViewSchema,
  PlacementSchema,
  PlaceResultSchema,
  RevocationPushReportSchema,
  RevocationStatusSchema,
  SettleReportSchema,
  StopResultSchema,
  UnsettledSchema,
} from './answers.js';
import {
  type AddNodeBody,
  AddNodeBodySchema,
  type AddSeedBody,
  AddSeedBodySchema,
  type AlertsQuery,
  AlertsQuerySchema,
  type ApprovalNoteBody,
  ApprovalNoteBodySchema,
  type ApprovalsQuery,
  ApprovalsQuerySchema,
  type EmptyBody,
  EmptyBodySchema,
  type ForceQuery,
  ForceQuerySchema,
  type LabelsBody,
  LabelsBodySchema,
  type LogsQuery,
  LogsQuerySchema,
  type NoQuery,
  NoQuerySchema,
  type PinBody,
  PinBodySchema,
  PlaceBodySchema,
  RevocationsBodySchema,
  type StopBody,
  StopBodySchema,
} from './bodies.js';
import {
  type ChainEventAnswer,
  type ChainEventProofAnswer,
  ChainEventProofSchema,
  ChainEventSchema,
  type ChainEventsQuery,
  ChainEventsQuerySchema,
  type ChainHeadAnswer,
  ChainHeadSchema,
  type DecisionAnswer,
  DecisionSchema,
} from './chain-answers.js';
import {
  type JobFileBody,
  JobFileBodySchema,
  type JobPlanAnswer,
  JobPlanSchema,
  type JobRunAnswer,
  JobRunSchema,
  type JobStatusAnswer,
  JobStatusSchema,
  type JobVersionAnswer,
  JobVersionSchema,
  type RevertJobBody,
  RevertJobBodySchema,
} from './job-answers.js';
import {
  type AddOperatorAnswer,
  AddOperatorAnswerSchema,
  type AddOperatorBody,
  AddOperatorBodySchema,
  type OperatorView,
  OperatorViewSchema,
  type WhoAmI,
  WhoAmISchema,
} from './operator-routes.js';
import type { Role } from './roles.js';

/** The HTTP methods the API uses. */
export type ApiMethod = 'GET' | 'POST' | 'DELETE';

/** One route of the operator API: what it takes and what it answers. */
export interface RouteDef<Body, Query, Answer> {
  readonly method: ApiMethod;
  /** Path segments after `/`; `:id` is the one path parameter. */
  readonly path: readonly string[];
  /** The JSON body's schema, or null for a route that takes no body (GET, DELETE). */
  readonly body: z.ZodType<Body> | null;
  /** The query string's schema (parameters by name, the first value of each). */
  readonly query: z.ZodType<Query>;
  /** The schema of a successful answer (status 200). */
  readonly answer: z.ZodType<Answer>;
  /** Answers with the NDJSON stream when asked to (`Accept: application/x-ndjson`). */
  readonly streams: boolean;
  /**
   * The least role that may call it (docs/operator-api.md, "Roles"): `viewer` for every GET,
   * `operator` for what operates instances, `admin` for nodes, trust, revocations and operators.
   */
  readonly role: Role;
}

/** The routes by name. */
export interface OperatorRoutes {
  readonly health: RouteDef<undefined, NoQuery, ApiHealth>;
  readonly listNodes: RouteDef<undefined, NoQuery, { readonly nodes: readonly NodeView[] }>;
  readonly addNode: RouteDef<AddNodeBody, NoQuery, { readonly node: NodeView }>;
  readonly addSeed: RouteDef<AddSeedBody, NoQuery, { readonly node: NodeView }>;
  readonly refreshNodes: RouteDef<EmptyBody, NoQuery, { readonly nodes: readonly NodeView[] }>;
  readonly getNode: RouteDef<undefined, NoQuery, { readonly node: NodeView }>;
  readonly removeNode: RouteDef<undefined, ForceQuery, { readonly node: NodeView }>;
  readonly pinNode: RouteDef<PinBody, NoQuery, { readonly node: NodeView }>;
  readonly cordonNode: RouteDef<EmptyBody, NoQuery, { readonly node: NodeView }>;
  readonly uncordonNode: RouteDef<EmptyBody, NoQuery, { readonly node: NodeView }>;
  readonly drainNode: RouteDef<EmptyBody, NoQuery, DrainReport>;
  readonly labelNode: RouteDef<LabelsBody, NoQuery, { readonly node: NodeView }>;
  readonly place: RouteDef<PlaceOrderInput, NoQuery, PlaceAnswer>;
  readonly listInstances: RouteDef<undefined, NoQuery, { readonly instances: readonly Placement[] }>;
  readonly getInstance: RouteDef<undefined, NoQuery, InstanceStatus>;
  readonly logs: RouteDef<undefined, LogsQuery, InstanceLogs>;
  readonly start: RouteDef<EmptyBody, NoQuery, { readonly placement: Placement }>;
  readonly stop: RouteDef<StopBody, NoQuery, StopResult>;
  readonly unload: RouteDef<EmptyBody, NoQuery, { readonly placement: Placement }>;
  readonly listAlerts: RouteDef<undefined, AlertsQuery, { readonly alerts: readonly AlertRecord[] }>;
  readonly ackAlert: RouteDef<EmptyBody, NoQuery, { readonly alert: AlertRecord }>;
  readonly revocations: RouteDef<undefined, NoQuery, RevocationStatus>;
  readonly pushRevocations: RouteDef<RevocationListFile, NoQuery, RevocationPushReport>;
  readonly unsettled: RouteDef<undefined, NoQuery, { readonly unsettled: readonly UnsettledRecord[] }>;
  readonly settle: RouteDef<EmptyBody, NoQuery, SettleReport>;
  readonly chainHead: RouteDef<undefined, NoQuery, ChainHeadAnswer>;
  readonly chainEvents: RouteDef<
    undefined,
    ChainEventsQuery,
    { readonly events: readonly ChainEventAnswer[] }
  >;
  readonly chainEvent: RouteDef<undefined, NoQuery, ChainEventProofAnswer>;
  readonly decision: RouteDef<undefined, NoQuery, DecisionAnswer>;
  readonly listApprovals: RouteDef<
    undefined,
    ApprovalsQuery,
    { readonly approvals: readonly ApprovalView[] }
  >;
  readonly getApproval: RouteDef<undefined, NoQuery, { readonly approval: ApprovalView }>;
  readonly approve: RouteDef<ApprovalNoteBody, NoQuery, { readonly approval: ApprovalView }>;
  readonly reject: RouteDef<ApprovalNoteBody, NoQuery, { readonly approval: ApprovalView }>;
  readonly listJobs: RouteDef<undefined, NoQuery, { readonly jobs: readonly JobStatusAnswer[] }>;
  readonly planJob: RouteDef<JobFileBody, NoQuery, JobPlanAnswer>;
  readonly runJob: RouteDef<JobFileBody, NoQuery, JobRunAnswer>;
  readonly getJob: RouteDef<undefined, NoQuery, { readonly job: JobStatusAnswer }>;
  readonly jobHistory: RouteDef<undefined, NoQuery, { readonly versions: readonly JobVersionAnswer[] }>;
  readonly revertJob: RouteDef<RevertJobBody, NoQuery, JobRunAnswer>;
  readonly stopJob: RouteDef<EmptyBody, NoQuery, { readonly job: JobStatusAnswer }>;
  readonly whoami: RouteDef<undefined, NoQuery, WhoAmI>;
  readonly listOperators: RouteDef<undefined, NoQuery, { readonly operators: readonly OperatorView[] }>;
  readonly addOperator: RouteDef<AddOperatorBody, NoQuery, AddOperatorAnswer>;
  readonly removeOperator: RouteDef<undefined, NoQuery, { readonly operator: OperatorView }>;
}

/** A route's name. */
export type RouteName = keyof OperatorRoutes;
/** The parsed body a route takes (`undefined` for none). */
export type RouteBody<K extends RouteName> =
  OperatorRoutes[K] extends RouteDef<infer B, unknown, unknown> ? B : never;
/** The parsed query a route takes. */
export type RouteQuery<K extends RouteName> =
  OperatorRoutes[K] extends RouteDef<unknown, infer Q, unknown> ? Q : never;
/** What a route answers. */
export type RouteAnswer<K extends RouteName> =
  OperatorRoutes[K] extends RouteDef<unknown, unknown, infer A> ? A : never;

const nodes = z.strictObject({ nodes: z.array(NodeViewSchema) });
const node = z.strictObject({ node: NodeViewSchema });
const placement = z.strictObject({ placement: PlacementSchema });
const approval = z.strictObject({ approval: ApprovalViewSchema });

const get = <A>(path: string, answer: z.ZodType<A>): RouteDef<undefined, NoQuery, A> => ({
  method: 'GET',
  path: path.split('/'),
  body: null,
  query: NoQuerySchema,
  answer,
  streams: false,
  role: 'viewer',
});
const post = <B, A>(
  role: Role,
  path: string,
  body: z.ZodType<B>,
  answer: z.ZodType<A>,
): RouteDef<B, NoQuery, A> => ({
  method: 'POST',
  path: path.split('/'),
  body,
  query: NoQuerySchema,
  answer,
  streams: false,
  role,
});

/** The operator API (docs/operator-api.md, "Routes"). */
export const OPERATOR_ROUTES: OperatorRoutes = Object.freeze({
  health: get('v1/health', HealthSchema),
  listNodes: get('v1/nodes', nodes),
  addNode: post('admin', 'v1/nodes', AddNodeBodySchema, node),
  addSeed: post('admin', 'v1/nodes/seed', AddSeedBodySchema, node),
  refreshNodes: post('operator', 'v1/nodes/refresh', EmptyBodySchema, nodes),
  getNode: get('v1/nodes/:id', node),
  removeNode: {
    ...get('v1/nodes/:id', node),
    method: 'DELETE' as const,
    query: ForceQuerySchema,
    role: 'admin' as const,
  },
  pinNode: post('admin', 'v1/nodes/:id/pin', PinBodySchema, node),
  cordonNode: post('operator', 'v1/nodes/:id/cordon', EmptyBodySchema, node),
  uncordonNode: post('operator', 'v1/nodes/:id/uncordon', EmptyBodySchema, node),
  drainNode: post('operator', 'v1/nodes/:id/drain', EmptyBodySchema, DrainReportSchema),
  labelNode: post('operator', 'v1/nodes/:id/labels', LabelsBodySchema, node),
  place: { ...post('operator', 'v1/place', PlaceBodySchema, PlaceResultSchema), streams: true },
  listInstances: get('v1/instances', z.strictObject({ instances: z.array(PlacementSchema) })),
  getInstance: get('v1/instances/:id', InstanceStatusSchema),
  logs: { ...get('v1/instances/:id/logs', InstanceLogsSchema), query: LogsQuerySchema },
  start: post('operator', 'v1/instances/:id/start', EmptyBodySchema, placement),
  stop: post('operator', 'v1/instances/:id/stop', StopBodySchema, StopResultSchema),
  unload: post('operator', 'v1/instances/:id/unload', EmptyBodySchema, placement),
  listAlerts: {
    ...get('v1/alerts', z.strictObject({ alerts: z.array(AlertSchema) })),
    query: AlertsQuerySchema,
  },
  ackAlert: post('operator', 'v1/alerts/:id/ack', EmptyBodySchema, z.strictObject({ alert: AlertSchema })),
  revocations: get('v1/revocations', RevocationStatusSchema),
  pushRevocations: post('admin', 'v1/revocations', RevocationsBodySchema, RevocationPushReportSchema),
  unsettled: get('v1/unsettled', z.strictObject({ unsettled: z.array(UnsettledSchema) })),
  settle: post('operator', 'v1/settle', EmptyBodySchema, SettleReportSchema),
  chainHead: get('v1/chain', ChainHeadSchema),
  chainEvents: {
    ...get('v1/chain/events', z.strictObject({ events: z.array(ChainEventSchema) })),
    query: ChainEventsQuerySchema,
  },
  chainEvent: get('v1/chain/events/:id', ChainEventProofSchema),
  decision: get('v1/decisions/:id', DecisionSchema),
  listApprovals: {
    ...get('v1/approvals', z.strictObject({ approvals: z.array(ApprovalViewSchema) })),
    query: ApprovalsQuerySchema,
  },
  getApproval: get('v1/approvals/:id', approval),
  approve: post('operator', 'v1/approvals/:id/approve', ApprovalNoteBodySchema, approval),
  reject: post('operator', 'v1/approvals/:id/reject', ApprovalNoteBodySchema, approval),
  listJobs: get('v1/jobs', z.strictObject({ jobs: z.array(JobStatusSchema) })),
  planJob: post('operator', 'v1/jobs/plan', JobFileBodySchema, JobPlanSchema),
  runJob: post('operator', 'v1/jobs', JobFileBodySchema, JobRunSchema),
  getJob: get('v1/jobs/:id', z.strictObject({ job: JobStatusSchema })),
  jobHistory: get('v1/jobs/:id/history', z.strictObject({ versions: z.array(JobVersionSchema) })),
  revertJob: post('operator', 'v1/jobs/:id/revert', RevertJobBodySchema, JobRunSchema),
  stopJob: post('operator', 'v1/jobs/:id/stop', EmptyBodySchema, z.strictObject({ job: JobStatusSchema })),
  whoami: get('v1/whoami', WhoAmISchema),
  listOperators: {
    ...get('v1/operators', z.strictObject({ operators: z.array(OperatorViewSchema) })),
    role: 'admin' as const,
  },
  addOperator: post('admin', 'v1/operators', AddOperatorBodySchema, AddOperatorAnswerSchema),
  removeOperator: {
    ...get('v1/operators/:id', z.strictObject({ operator: OperatorViewSchema })),
    method: 'DELETE' as const,
    role: 'admin' as const,
  },
});

/** The route names, in table order. */
export const ROUTE_NAMES: readonly RouteName[] = Object.freeze([
  'health',
  'listNodes',
  'addNode',
  'addSeed',
  'refreshNodes',
  'getNode',
  'removeNode',
  'pinNode',
  'cordonNode',
  'uncordonNode',
  'drainNode',
  'labelNode',
  'place',
  'listInstances',
  'getInstance',
  'logs',
  'start',
  'stop',
  'unload',
  'listAlerts',
  'ackAlert',
  'revocations',
  'pushRevocations',
  'unsettled',
  'settle',
  'chainHead',
  'chainEvents',
  'chainEvent',
  'decision',
  'listApprovals',
  'getApproval',
  'approve',
  'reject',
  'listJobs',
  'planJob',
  'runJob',
  'getJob',
  'jobHistory',
  'revertJob',
  'stopJob',
  'whoami',
  'listOperators',
  'addOperator',
  'removeOperator',
]);

/** A matched route: its name and path parameters. */
export interface RouteMatch {
  readonly name: RouteName;
  readonly params: Readonly<Record<string, string>>;
}

/**
 * The route for `method` and `segments` (the path split at `/`, without the leading empty one), or
 * the methods the path allows when none matches the method (`methods` empty: no such path).
 */
export function matchRoute(
  method: string,
  segments: readonly string[],
): RouteMatch | { readonly name: undefined; readonly methods: readonly ApiMethod[] } {
  const methods: ApiMethod[] = [];
  const all = ROUTE_NAMES.map((name) => [name, OPERATOR_ROUTES[name].path] as const);
  for (const name of ROUTE_NAMES) {
    const route = OPERATOR_ROUTES[name];
    if (route.path.length !== segments.length) continue;
    const params: Record<string, string> = {};
    let ok = true;
    route.path.forEach((p, i) => {
      const s = segments[i] ?? '';
      if (!ok) return;
      if (p.startsWith(':')) {
        // A literal segment of another route wins (`/v1/nodes/refresh` is not node "refresh").
        if (s === '' || all.some(([, q]) => q.length === route.path.length && q[i] === s)) ok = false;
        else params[p.slice(1)] = s;
      } else if (p !== s) ok = false;
    });
    if (!ok) continue;
    if (route.method === method) return { name, params };
    methods.push(route.method);
  }
  return { name: undefined, methods };
}

/** The path of route `name` with its `:id` filled in (percent-encoded). */
export function routePath(name: RouteName, id?: string): string {
  const segs = OPERATOR_ROUTES[name].path.map((p) => (p === ':id' ? encodeURIComponent(id ?? '') : p));
  return `/${segs.join('/')}`;
}
