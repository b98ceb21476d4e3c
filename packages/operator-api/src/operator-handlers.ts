import type { OperatorHandlers } from './handlers.js';
import { addOperator, operatorView } from './operator-routes.js';
import type { OperatorStore } from './operator-store.js';
import type { Role } from './roles.js';

/** The handlers of the operator-management routes and `whoami`, served from `store`. */
export type OperatorManagementHandlers = Pick<
  OperatorHandlers,
  'whoami' | 'listOperators' | 'addOperator' | 'removeOperator'
>;

/**
 * Binds `GET /v1/whoami` and the `/v1/operators` routes to an operators file (the daemon adds them
 * to its plane's handlers).
 */
export function operatorHandlers(store: OperatorStore, now: () => number = Date.now): OperatorManagementHandlers {
  return {
    whoami: ({ actor }) => ({
      name: actor.name,
      // cast: an actor's role is always one of ROLES (set by the Authenticator).
      role: actor.role as Role,
      via: actor.via,
      ...(actor.key === undefined ? {} : { key: actor.key }),
    }),
    listOperators: () => ({ operators: store.list().map(operatorView) }),
    addOperator: ({ body }) => addOperator(store, body, now()),
    removeOperator: ({ id }) => ({ operator: operatorView(store.remove(id)) }),
  };
}
