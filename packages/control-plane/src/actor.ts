import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Who asked for an action: the operator's name and role and how they proved it (their Ed25519
 * `key`, hex, or a named bearer token). The operator API runs each request's handler as its actor
 * ({@link runAsActor}); the decisions chained meanwhile name it.
 */
export interface Actor {
  /** The operator's name (`api.token` for the controller home's admin token). */
  readonly name: string;
  /** `viewer`, `operator` or `admin`. */
  readonly role: string;
  /** How the request was authenticated. */
  readonly via: 'key' | 'token';
  /** The operator's public key (64 hex) for a signed request. */
  readonly key?: string;
}

const current = new AsyncLocalStorage<Actor>();

/** Runs `fn` with `actor` as the actor of every decision chained within it (its async continuations too). */
export function runAsActor<T>(actor: Actor, fn: () => T): T {
  return current.run(actor, fn);
}

/** The actor of the action in progress, if any. */
export function currentActor(): Actor | undefined {
  return current.getStore();
}

/**
 * The `actor` field a chained decision carries: `{actor: {name, role, via, key?}}` while an
 * operator's request is handled, else nothing (the controller's own actions: ticks, reschedules).
 */
export function actorField(): { actor?: { name: string; role: string; via: string; key?: string } } {
  const a = current.getStore();
  if (a === undefined) return {};
  return {
    actor: { name: a.name, role: a.role, via: a.via, ...(a.key === undefined ? {} : { key: a.key }) },
  };
}
