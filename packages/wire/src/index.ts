export { WireClient } from './client.js';
export type { CallOptions, CallResult, WireClientOptions } from './client-session.js';
export { WireSession } from './client-session.js';
export type { CloseCodeValue } from './close-codes.js';
export { CloseCode } from './close-codes.js';
export type { WireErrorCode } from './errors.js';
export { WireError } from './errors.js';
export type { FetchChannel, FetchOptions } from './fetch-package.js';
export { fetchPackage } from './fetch-package.js';
export {
  DEFAULT_CALL_TIMEOUT_MS,
  DEFAULT_FETCH_ATTEMPTS,
  DEFAULT_FETCH_TIMEOUT_MS,
  DEFAULT_FETCH_WINDOW,
  DEFAULT_HANDSHAKE_TIMEOUT_MS,
  DEFAULT_IDLE_TIMEOUT_MS,
  DEFAULT_MAX_CALLS_PER_SESSION,
  DEFAULT_MAX_PEER_CONNECTIONS,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_PING_INTERVAL_MS,
  MAX_BINARY_FRAME_BYTES,
  MAX_TEXT_FRAME_BYTES,
  MAX_WIRE_PIECE_BYTES,
} from './limits.js';
export type { DirPackageSourceOptions, PackageSource } from './package-source.js';
export { DEFAULT_IDLE_CLOSE_MS, DirPackageSource } from './package-source.js';
export type { WireServerOptions, WireTlsOptions } from './server.js';
export { WireServer } from './server.js';
export type { CallContext, CallHandler } from './server-session.js';
export type { PooledCallOptions, WireSessionPoolOptions } from './session-pool.js';
export {
  DEFAULT_POOL_IDLE_MS,
  DEFAULT_POOL_MAX_SESSIONS,
  WireSessionPool,
} from './session-pool.js';
