import type { TransferProgress } from '@heddle/control-plane';
import type { RouteAnswer, RouteBody, RouteName, RouteQuery } from './routes.js';

/** What the server adapter gives a route's handler: everything already validated with the route's schemas. */
export interface HandlerRequest<K extends RouteName> {
  /** The `:id` path parameter (empty for a route without one). */
  readonly id: string;
  /** The parsed body (`undefined` for a route that takes none). */
  readonly body: RouteBody<K>;
  /** The parsed query. */
  readonly query: RouteQuery<K>;
  /** Told of package transfers: set for a streamed place (`Accept: application/x-ndjson`). */
  readonly onProgress?: (p: TransferProgress) => void;
  /** The request's id: the client's `x-request-id`, or one generated for it (a UUID). */
  readonly requestId: string;
}

/**
 * What each route does: one function per route name, given the validated request, answering the
 * route's answer type (or throwing an `ApiFailure` or a `PlaneError`, answered with its code). The
 * controller daemon binds them to its `ControlPlane`.
 */
export type OperatorHandlers = {
  readonly [K in RouteName]: (req: HandlerRequest<K>) => RouteAnswer<K> | Promise<RouteAnswer<K>>;
};
