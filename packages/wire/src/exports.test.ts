import { readFileSync } from 'node:fs';
import { typeExportNames } from '@heddle/envelope/testing';
import { describe, expect, it } from 'vitest';
import * as api from './index.js';

/** The value exports of the main entry, sorted. */
const VALUES: readonly string[] = [
  'CloseCode',
  'DEFAULT_CALL_TIMEOUT_MS',
  'DEFAULT_FETCH_ATTEMPTS',
  'DEFAULT_FETCH_TIMEOUT_MS',
  'DEFAULT_FETCH_WINDOW',
  'DEFAULT_HANDSHAKE_TIMEOUT_MS',
  'DEFAULT_IDLE_CLOSE_MS',
  'DEFAULT_IDLE_TIMEOUT_MS',
  'DEFAULT_MAX_CALLS_PER_SESSION',
  'DEFAULT_MAX_PEER_CONNECTIONS',
  'DEFAULT_MAX_SESSIONS',
  'DEFAULT_PING_INTERVAL_MS',
  'DEFAULT_POOL_IDLE_MS',
  'DEFAULT_POOL_MAX_SESSIONS',
  'DirPackageSource',
  'MAX_BINARY_FRAME_BYTES',
  'MAX_TEXT_FRAME_BYTES',
  'MAX_WIRE_PIECE_BYTES',
  'WireClient',
  'WireError',
  'WireServer',
  'WireSession',
  'WireSessionPool',
  'fetchPackage',
];

/** The names in the type-only export clauses (`export type { ... }`, `type X` inside `export { ... }`) of the main entry, sorted. */
const TYPES: readonly string[] = [
  'CallContext',
  'CallHandler',
  'CallOptions',
  'CallResult',
  'CloseCodeValue',
  'DirPackageSourceOptions',
  'FetchChannel',
  'FetchOptions',
  'PackageSource',
  'PooledCallOptions',
  'WireClientOptions',
  'WireErrorCode',
  'WireServerOptions',
  'WireSessionPoolOptions',
  'WireTlsOptions',
];

describe('@heddle/wire main entry exports', () => {
  it('value exports change only on purpose: update this list when you mean to change the API', () => {
    expect(Object.keys(api).sort()).toEqual(VALUES);
  });

  it('type exports change only on purpose: update this list when you mean to change the API', () => {
    expect(typeExportNames(readFileSync(new URL('./index.ts', import.meta.url), 'utf8'))).toEqual(TYPES);
  });
});
