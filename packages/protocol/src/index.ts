export {
  type AnswerObject,
  CogIdSchema,
  ConfigFieldSchema,
  type ConfigValue,
  ConfigValueSchema,
  ConfigValuesSchema,
  CountSchema,
  DEFAULT_GRACE_MS,
  DEFAULT_LOG_LINES,
  Hash64Schema,
  InstanceIdSchema,
  MAX_CONFIG_STRING,
  MAX_CONFIG_VALUES,
  MAX_GRACE_MS,
  MAX_LOG_LINES,
  NodeIdSchema,
  VariantSchema,
} from './body-parts.js';
export { CallFailure, type CallFailureKind, lostCallKind, refusalKind } from './call-failure.js';
export {
  type AllowListOptions,
  AllowListPolicy,
  type ControllerIdentity,
  type ControllerPolicy,
} from './controller-policy.js';
export { type CreateRequestInput, createRequest, signRequest } from './create-request.js';
export {
  type DescribeAnswer,
  DescribeAnswerSchema,
  type DescribeBody,
  DescribeBodySchema,
  type HostSoftware,
  HostSoftwareSchema,
  MAX_ADVERTISED_LEASE_MS,
  WORKLOAD_HOST_SERVICE,
  type WorkloadHostAdvertisement,
  WorkloadHostAdvertisementSchema,
} from './describe-schemas.js';
export {
  type ClockOffset,
  clockOffset,
  HOST_CLOCK_TAG,
  hostClockFromReason,
  hostClockSuffix,
} from './host-clock.js';
export {
  DEPARTURE_REASONS,
  type DepartedInstance,
  type DepartureReason,
  type EvidenceView,
  EvidenceViewSchema,
  type HostListingAnswer,
  HostListingAnswerSchema,
  type InFlightDecision,
  type InstanceBody,
  InstanceBodySchema,
  type InstanceStatusAnswer,
  InstanceStatusAnswerSchema,
  isListing,
  type LogsAnswer,
  LogsAnswerSchema,
  type StartAnswer,
  StartAnswerSchema,
  type StatusAnswer,
  type StopAnswer,
  StopAnswerSchema,
  type UnloadAnswer,
  UnloadAnswerSchema,
} from './instance-schemas.js';
export {
  CTL_VERSION,
  DEFAULT_NONCE_CAPACITY,
  DEFAULT_REQUEST_TTL_MS,
  MAX_CLOCK_SKEW_MS,
  MAX_LIFETIME_MS,
  MAX_MESSAGE_BYTES,
  MAX_PAYLOAD_DEPTH,
  MAX_REASON_LENGTH,
  MAX_TOKEN_LENGTH,
  NONCE_HEX_LENGTH,
} from './limits.js';
export {
  answerSchema,
  issueField,
  METHOD_BODY_SCHEMAS,
  type MethodAnswer,
  type MethodAnswers,
  type MethodBodies,
  type MethodBody,
  type MethodBodyInput,
  type MethodBodyInputs,
  type MethodBodySchemas,
  parseAnswer,
  parseRequestBody,
} from './method-schemas.js';
export {
  ANY_TARGET,
  CTL_METHODS,
  type CtlMethod,
  DESCRIBE_METHOD,
  isCtlMethod,
  MUTATING_METHODS,
  mutates,
} from './methods.js';
export {
  NonceGuard,
  type NonceGuardOptions,
  type NonceJournalSink,
  type NonceVerdict,
} from './nonce-guard.js';
export {
  ADAPTER_STATES,
  type AdapterState,
  type AdapterStatus,
  AdapterStatusSchema,
  type InstanceView,
  InstanceViewSchema,
  type PlaceAnswer,
  PlaceAnswerSchema,
  type PlaceBody,
  type PlaceBodyInput,
  PlaceBodySchema,
  type PlaceConfig,
} from './place-schemas.js';
export { ProtocolError, type ProtocolErrorCode } from './protocol-error.js';
export { isRefusalCode, REFUSAL_CODES, Refusal, type RefusalCode, type RefusalOptions } from './refusal.js';
export { type CtlBody, type CtlRequest, CtlRequestSchema } from './request.js';
export { HOST_FEATURES, type HostFeature, REQUEST_ID_RE, RequestIdSchema } from './request-id.js';
export {
  type CtlOk,
  type CtlOutcome,
  CtlOutcomeSchema,
  type CtlRefused,
  type CtlResponse,
  CtlResponseSchema,
  okOutcome,
  RESPONSE_METHOD_RE,
  refusedOutcome,
} from './response.js';
export { RESPONSE_ERROR_CODES, ResponseError, type ResponseErrorCode } from './response-error.js';
export {
  type RevokeAnswer,
  RevokeAnswerSchema,
  type RevokeBody,
  RevokeBodySchema,
} from './revoke-schemas.js';
export { boundReason, claimedRequest, type ResponseBinding, signResponse } from './sign-response.js';
export { type SignedCtl, SignedCtlSchema } from './signed-ctl.js';
export { type VerifiedRequest, type VerifyRequestOptions, verifyRequest } from './verify-request.js';
export { type VerifiedResponse, type VerifyResponseOptions, verifyResponse } from './verify-response.js';
