export type {
  ApiErrorBody,
  ApiHealth,
  ApiInfo,
  ApiLeadership,
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
  DrainReportSchema,
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
export type { AuthHeaderIssue, SignedAuth, SignedRequestParts } from './auth-header.js';
export {
  canonicalRequest,
  formatSignedAuth,
  isAuthIssue,
  parseSignedAuth,
  SIGNED_SCHEME,
  signedMessage,
  signRequest,
  verifySignedAuth,
} from './auth-header.js';
export type { AuthenticatorOptions, OperatorLookup, PendingAuth } from './authenticator.js';
export { ADMIN_TOKEN_NAME, Authenticator, requireRole } from './authenticator.js';
export type {
  AddNodeBody,
  AddSeedBody,
  AlertsQuery,
  ApprovalNoteBody,
  ApprovalsQuery,
  EmptyBody,
  ForceQuery,
  LabelsBody,
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
  LabelsBodySchema,
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
export {
  API_INFO_FILE,
  API_TOKEN_FILE,
  MAX_BODY_BYTES,
  NDJSON,
  REQUEST_ID_HEADER,
  REQUEST_ID_PATTERN,
} from './constants.js';
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
export {
  type JobFileBody,
  JobFileBodySchema,
  type JobInstanceAnswer,
  type JobPlanAnswer,
  type JobPlanChangeAnswer,
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
export type { OperatorManagementHandlers } from './operator-handlers.js';
export { operatorHandlers } from './operator-handlers.js';
export type { AddOperatorAnswer, AddOperatorBody, OperatorView, WhoAmI } from './operator-routes.js';
export {
  AddOperatorAnswerSchema,
  AddOperatorBodySchema,
  addOperator,
  newOperatorToken,
  OperatorViewSchema,
  operatorView,
  WhoAmISchema,
} from './operator-routes.js';
export { OperatorStore, readOperatorsFile, tokenHash } from './operator-store.js';
export type { OperatorEntry, OperatorsFile } from './operators-file.js';
export {
  OPERATORS_FILE,
  OPERATORS_SCHEMA,
  OperatorEntrySchema,
  OperatorNameSchema,
  OperatorsFileSchema,
  RoleSchema,
} from './operators-file.js';
export type { ReplayGuardOptions } from './replay-guard.js';
export { ReplayGuard } from './replay-guard.js';
export type { Role } from './roles.js';
export { ROLES, roleAllows } from './roles.js';
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
export type { ApiLog, ApiRequestEvent, ApiServerOptions } from './server.js';
export { ApiServer } from './server.js';
export { CSRF_HEADER, SESSION_COOKIE, SESSION_TTL_MS, Sessions } from './sessions.js';
export { type SseMessage, SseParser } from './sse-parser.js';
export { StaticUi, UI_CSP, UI_PREFIX } from './static-ui.js';
export type { TlsMaterial } from './tls-cert.js';
export {
  certFingerprint,
  FINGERPRINT_RE,
  fingerprintOfDer,
  normaliseFingerprint,
  selfSignedCert,
} from './tls-cert.js';
