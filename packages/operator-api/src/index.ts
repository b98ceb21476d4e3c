export type {
  ApiErrorBody,
  ApiHealth,
  ApiInfo,
  ConstraintFailureAnswer,
  ExplainRowAnswer,
  ExplanationAnswer,
  InstanceLogs,
  InstanceStatus,
  PlaceAnswer,
  Placement,
  PlaceStreamEvent,
  RevocationStatus,
  StopResult,
} from './answer-types.js';
export {
  AlertSchema,
  ApiErrorAnswerSchema,
  ApiErrorBodySchema,
  ApiInfoSchema,
  ApprovalViewSchema,
  AttemptSchema,
  ExplanationSchema,
  HealthSchema,
  InstanceLogsSchema,
  InstanceStatusSchema,
  NodeViewSchema,
  PlacementSchema,
  PlaceResultSchema,
  PlaceStreamEventSchema,
  RevocationPushReportSchema,
  RevocationStatusSchema,
  SettleReportSchema,
  StopResultSchema,
  TransferProgressSchema,
  UnsettledSchema,
} from './answers.js';
export { ApiError } from './api-error.js';
export type {
  AddNodeBody,
  AddSeedBody,
  AlertsQuery,
  ApprovalNoteBody,
  ApprovalsQuery,
  EmptyBody,
  ForceQuery,
  LogsQuery,
  NoQuery,
  PinBody,
  StopBody,
} from './bodies.js';
export {
  AddNodeBodySchema,
  AddSeedBodySchema,
  AlertsQuerySchema,
  ApprovalNoteBodySchema,
  ApprovalsQuerySchema,
  EmptyBodySchema,
  ForceQuerySchema,
  LogsQuerySchema,
  NoQuerySchema,
  PinBodySchema,
  PlaceBodySchema,
  RevocationsBodySchema,
  StopBodySchema,
} from './bodies.js';
export {
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
export type { ApiClientOptions, PlaceCallOptions } from './client.js';
export { ApiClient } from './client.js';
export { API_INFO_FILE, API_TOKEN_FILE, MAX_BODY_BYTES, NDJSON } from './constants.js';
export type { MappedError } from './errors.js';
export { ApiFailure, mapError, STATUS_OF_CODE } from './errors.js';
export {
  type FollowEventsOptions,
  followEvents,
  type StreamEvent,
} from './event-follower.js';
export {
  DEFAULT_HEARTBEAT_MS,
  EVENT_RETRY_MS,
  EVENT_STREAM,
  sseFrame,
} from './event-stream.js';
export type { HandlerRequest, OperatorHandlers } from './handlers.js';
export type {
  ApiMethod,
  OperatorRoutes,
  RouteAnswer,
  RouteBody,
  RouteDef,
  RouteMatch,
  RouteName,
  RouteQuery,
} from './routes.js';
export { matchRoute, OPERATOR_ROUTES, ROUTE_NAMES, routePath } from './routes.js';
export type { ApiLog, ApiServerOptions } from './server.js';
export { ApiServer } from './server.js';
export { CSRF_HEADER, SESSION_COOKIE, SESSION_TTL_MS, Sessions } from './sessions.js';
export { type SseMessage, SseParser } from './sse-parser.js';
export { StaticUi, UI_CSP, UI_PREFIX } from './static-ui.js';
