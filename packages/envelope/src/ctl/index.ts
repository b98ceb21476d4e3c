export * from './call-failure.js';
export * from './controller-policy.js';
export * from './create-request.js';
export * from './limits.js';
export * from './methods.js';
export * from './nonce-guard.js';
export * from './refusal.js';
export * from './request.js';
export * from './response.js';
export * from './response-error.js';
export * from './sign-response.js';
export {
  type DecodedSignedCtl,
  decodeSignedCtl,
  type EnvelopeDefect,
  type SignedCtl,
  SignedCtlSchema,
} from './signed-ctl.js';
export * from './verify-request.js';
export * from './verify-response.js';
