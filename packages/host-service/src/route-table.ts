import { COG_ROUTES, type CogRoute } from '@heddle/package';
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
    // cast: widen the tuple of route names to test an arbitrary string against it.
    if (!(COG_ROUTES as readonly string[]).includes(route)) {
      throw new HostServiceError(
        'invalid_config',
        `routes: ${route} is not a cog route (${COG_ROUTES.join(', ')})`,
        {
          field: 'routes',
        },
      );
    }
    // cast: route was checked to be one of COG_ROUTES above.
    if (table.has(route as CogRoute)) {
      throw new HostServiceError('invalid_config', `routes: two adapters for the ${route} route`, {
        field: 'routes',
      });
    }
    // cast: route was checked to be one of COG_ROUTES above.
    table.set(route as CogRoute, host);
  }
  return table;
}
