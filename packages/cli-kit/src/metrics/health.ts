/**
 * What a daemon says about its readiness: one boolean per named check (`store_open`, `listening`,
 * ...). Only these names and booleans are ever served: no versions, keys, paths or node lists.
 */
export type ReadinessChecks = Readonly<Record<string, boolean>>;

/** An answer of a health endpoint: status code and JSON body. */
export interface HealthAnswer {
  readonly status: 200 | 503;
  readonly body: { readonly status: 'ok' | 'ready' | 'not_ready'; readonly checks?: ReadinessChecks };
}

/** The health paths every daemon serves without credentials. */
export const HEALTH_PATHS: readonly ['/healthz', '/readyz'] = Object.freeze(['/healthz', '/readyz'] as const);

/**
 * The answer of `path` (`/healthz`: 200 `{"status":"ok"}` whenever the process answers at all;
 * `/readyz`: 200 `{"status":"ready","checks":{...}}` when every check holds, else 503
 * `{"status":"not_ready","checks":{...}}`), or undefined for any other path. A `ready` that throws
 * reads as not ready with the single check `ready_check: false`.
 */
export function healthAnswer(path: string, ready: () => ReadinessChecks): HealthAnswer | undefined {
  if (path === '/healthz') return { status: 200, body: { status: 'ok' } };
  if (path !== '/readyz') return undefined;
  let checks: ReadinessChecks;
  try {
    checks = ready();
  } catch {
    checks = { ready_check: false };
  }
  const ok = Object.values(checks).every((v) => v === true);
  return { status: ok ? 200 : 503, body: { status: ok ? 'ready' : 'not_ready', checks } };
}
