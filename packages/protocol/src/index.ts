export { CallFailure, type CallFailureKind, lostCallKind, refusalKind } from './call-failure.js';
export {
  type AllowListOptions,
  AllowListPolicy,
  type ControllerIdentity,
  type ControllerPolicy,
} from './controller-policy.js';
export { type CreateRequestInput, createRequest, signRequest } from './create-request.js';
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
export { ProtocolError, type ProtocolErrorCode } from './protocol-error.js';
export { isRefusalCode, REFUSAL_CODES, Refusal, type RefusalCode, type RefusalOptions } from './refusal.js';
export { type CtlBody, type CtlRequest, CtlRequestSchema } from './request.js';
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
export { boundReason, claimedRequest, type ResponseBinding, signResponse } from './sign-response.js';
export { type SignedCtl, SignedCtlSchema } from './signed-ctl.js';
export { type VerifiedRequest, type VerifyRequestOptions, verifyRequest } from './verify-request.js';
export { type VerifiedResponse, type VerifyResponseOptions, verifyResponse } from './verify-response.js';
