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
  EmptyBodySchema,
  ForceQuerySchema,
  LogsQuerySchema,
  NoQuerySchema,
  PinBodySchema,
  PlaceBodySchema,
  RevocationsBodySchema,
  StopBodySchema,
} from './bodies.js';
export { ApiClient, type ApiClientOptions, type PlaceCallOptions } from './client.js';
export { API_INFO_FILE, API_TOKEN_FILE, MAX_BODY_BYTES, NDJSON } from './constants.js';
export { ApiFailure, type MappedError, mapError, STATUS_OF_CODE } from './errors.js';
export type { HandlerRequest, OperatorHandlers } from './handlers.js';
export {
  type ApiMethod,
  matchRoute,
  OPERATOR_ROUTES,
  type OperatorRoutes,
  ROUTE_NAMES,
  type RouteAnswer,
  type RouteBody,
  type RouteDef,
  type RouteMatch,
  type RouteName,
  type RouteQuery,
  routePath,
} from './routes.js';
export { type ApiLog, ApiServer, type ApiServerOptions } from './server.js';
