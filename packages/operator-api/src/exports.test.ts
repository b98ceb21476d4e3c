import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as api from './index.js';

describe('the public API of @heddle/operator-api', () => {
  it('value exports: changes only on purpose: update this list when you mean to change the API', () => {
    expect(Object.keys(api).sort()).toEqual([
      'API_INFO_FILE',
      'API_TOKEN_FILE',
      'AddNodeBodySchema',
      'AddSeedBodySchema',
      'AlertSchema',
      'AlertsQuerySchema',
      'ApiClient',
      'ApiError',
      'ApiErrorAnswerSchema',
      'ApiErrorBodySchema',
      'ApiFailure',
      'ApiInfoSchema',
      'ApiServer',
      'AttemptSchema',
      'EmptyBodySchema',
      'ExplanationSchema',
      'ForceQuerySchema',
      'HealthSchema',
      'InstanceLogsSchema',
      'InstanceStatusSchema',
      'LogsQuerySchema',
      'MAX_BODY_BYTES',
      'NDJSON',
      'NoQuerySchema',
      'NodeViewSchema',
      'OPERATOR_ROUTES',
      'PinBodySchema',
      'PlaceBodySchema',
      'PlaceResultSchema',
      'PlaceStreamEventSchema',
      'PlacementSchema',
      'ROUTE_NAMES',
      'RevocationPushReportSchema',
      'RevocationStatusSchema',
      'RevocationsBodySchema',
      'STATUS_OF_CODE',
      'SettleReportSchema',
      'StopBodySchema',
      'StopResultSchema',
      'TransferProgressSchema',
      'UnsettledSchema',
      'mapError',
      'matchRoute',
      'routePath',
    ]);
  });

  it('type exports: changes only on purpose: update this list when you mean to change the API', () => {
    const index = readFileSync(new URL('./index.ts', import.meta.url), 'utf8');
    const names = [...index.matchAll(/export type \{([^}]*)\}/g)].flatMap((m) =>
      (m[1] ?? '')
        .split(',')
        .map((n) => n.trim())
        .filter((n) => n !== ''),
    );
    expect(names.sort()).toEqual([
      'AddNodeBody',
      'AddSeedBody',
      'AlertsQuery',
      'ApiClientOptions',
      'ApiErrorBody',
      'ApiHealth',
      'ApiInfo',
      'ApiLog',
      'ApiMethod',
      'ApiServerOptions',
      'ConstraintFailureAnswer',
      'EmptyBody',
      'ExplainRowAnswer',
      'ExplanationAnswer',
      'ForceQuery',
      'HandlerRequest',
      'InstanceLogs',
      'InstanceStatus',
      'LogsQuery',
      'MappedError',
      'NoQuery',
      'OperatorHandlers',
      'OperatorRoutes',
      'PinBody',
      'PlaceAnswer',
      'PlaceCallOptions',
      'PlaceStreamEvent',
      'Placement',
      'RevocationStatus',
      'RouteAnswer',
      'RouteBody',
      'RouteDef',
      'RouteMatch',
      'RouteName',
      'RouteQuery',
      'StopBody',
      'StopResult',
    ]);
  });
});
