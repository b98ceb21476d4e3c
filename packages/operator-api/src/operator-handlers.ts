import { ApiFailure } from './errors.js';
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
 * to its plane's handlers). Without a store, the `/v1/operators` routes answer `not_found`.
 */
export function operatorHandlers(
  store: OperatorStore | undefined,
  now: () => number = Date.now,
): OperatorManagementHandlers {
  const held = (): OperatorStore => {
    if (store === undefined) throw new ApiFailure('not_found', 'this controller keeps no operators file');
    return store;
  };
  return {
    whoami: ({ actor }) => ({
      name: actor.name,
      // cast: an actor's role is always one of ROLES (set by the Authenticator).
      role: actor.role as Role,
      via: actor.via,
      ...(actor.key === undefined ? {} : { key: actor.key }),
    }),
    listOperators: () => ({ operators: held().list().map(operatorView) }),
    addOperator: ({ body }) => addOperator(held(), body, now()),
    removeOperator: ({ id }) => ({ operator: operatorView(held().remove(id)) }),
  };
}
