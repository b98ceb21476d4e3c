import { COG_ROUTES, type CogRoute, isCogRoute } from '@heddle/model';
import type { WorkloadHost } from '@heddle/runtime';
import { HostServiceError } from './errors.js';

/**
 * The route table of a host: each WorkloadHost under its adapter's route. Throws `HostServiceError`
 * `invalid_config` (field `routes`) for an adapter whose route is not a cog route (`native`, `wasi`,
 * `container`) or for two adapters on one route.
 */
export function routeTable(hosts: Iterable<WorkloadHost>): ReadonlyMap<CogRoute, WorkloadHost> {
  const table = new Map<CogRoute, WorkloadHost>();
  for (const host of hosts) {
    const route = host.adapter.route;
    if (!isCogRoute(route)) {
      throw new HostServiceError(
        'invalid_config',
        `routes: ${route} is not a cog route (${COG_ROUTES.join(', ')})`,
        {
          field: 'routes',
        },
      );
    }
    if (table.has(route)) {
      throw new HostServiceError('invalid_config', `routes: two adapters for the ${route} route`, {
        field: 'routes',
      });
    }
    table.set(route, host);
  }
  return table;
}
