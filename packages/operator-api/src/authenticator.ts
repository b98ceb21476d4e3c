import { createHash, timingSafeEqual } from 'node:crypto';
import type { Actor } from '@heddle/control-plane';
import {
  isAuthIssue,
  parseSignedAuth,
  SIGNED_SCHEME,
  type SignedAuth,
  verifySignedAuth,
} from './auth-header.js';
import { ApiFailure } from './errors.js';
import { tokenHash } from './operator-store.js';
import type { OperatorEntry } from './operators-file.js';
import { ReplayGuard } from './replay-guard.js';
import { type Role, roleAllows } from './roles.js';

/** Where an {@link Authenticator} finds operators (an `OperatorStore` fits). */
export interface OperatorLookup {
  byKey(hex: string): OperatorEntry | undefined;
  byTokenHash(sha256Hex: string): OperatorEntry | undefined;
}

/** Options of an {@link Authenticator}. */
export interface AuthenticatorOptions {
  /** The controller home's `api.token`: an admin bearer token named `api.token`. */
  readonly adminToken: string;
  /** The operators with keys or named tokens (none when absent). */
  readonly operators?: OperatorLookup;
  /** The replay guard (clock skew and nonces). One per controller: every listener shares it. */
  readonly replay?: ReplayGuard;
}

/** The name of the actor the home's `api.token` authenticates. */
export const ADMIN_TOKEN_NAME = 'api.token';

/** A request whose header passed and whose signature is checked once its body is read. */
export interface PendingAuth {
  /** Checks the body against the signature and spends the nonce; answers the actor. */
  finish(body: Uint8Array): Actor;
}

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/**
 * Who sent a request (docs/operator-api.md, "Authentication"): a bearer token (the home's `api.token`,
 * admin; or an operator's named token, by its SHA-256) or a `Heddle-Ed25519` signed request of an
 * operator's key. Refuses with 401 codes: `unauthorized` (no credentials), `bad_auth_header`,
 * `unknown_token`, `unknown_key`, `stale_request`, `bad_signature`, `replayed_request`.
 */
export class Authenticator {
  readonly #admin: Buffer;
  readonly #operators: OperatorLookup | undefined;
  readonly #replay: ReplayGuard;

  constructor(options: AuthenticatorOptions) {
    this.#admin = digest(options.adminToken);
    this.#operators = options.operators;
    this.#replay = options.replay ?? new ReplayGuard();
  }

  /**
   * Checks the `Authorization` header before the body is read: a bearer token is decided at once; a
   * signed request's header, time and key are, and its signature is checked by `finish` on the body.
   */
  begin(header: string | undefined, method: string, target: string): PendingAuth {
    const h = header ?? '';
    if (h.startsWith(`${SIGNED_SCHEME} `)) return this.#signed(h, method, target);
    const m = /^Bearer ([\x21-\x7e]{1,512})$/.exec(h);
    if (m?.[1] === undefined) {
      throw new ApiFailure(
        'unauthorized',
        `no credentials: send "Authorization: Bearer <token>" or a signed "${SIGNED_SCHEME}" request`,
        { field: 'authorization' },
      );
    }
    const actor = this.#bearer(m[1]);
    return { finish: () => actor };
  }

  #bearer(token: string): Actor {
    if (timingSafeEqual(digest(token), this.#admin))
      return { name: ADMIN_TOKEN_NAME, role: 'admin', via: 'token' };
    const op = this.#operators?.byTokenHash(tokenHash(token));
    if (op !== undefined) return { name: op.name, role: op.role, via: 'token' };
    throw new ApiFailure('unknown_token', 'the bearer token is not the api.token nor an operator token', {
      field: 'authorization',
    });
  }

  #signed(header: string, method: string, target: string): PendingAuth {
    const parsed = parseSignedAuth(header);
    if (isAuthIssue(parsed)) {
      throw new ApiFailure('bad_auth_header', `${SIGNED_SCHEME} header ${parsed.field}: ${parsed.message}`, {
        field: `authorization.${parsed.field}`,
      });
    }
    this.#replay.checkTime(parsed.ts);
    const op = this.#operators?.byKey(parsed.key);
    if (op === undefined) {
      throw new ApiFailure(
        'unknown_key',
        `key ${parsed.key.slice(0, 16)}… is not an operator's (heddle operator ls)`,
        {
          field: 'authorization.key',
        },
      );
    }
    return { finish: (body) => this.#verify(parsed, op, method, target, body) };
  }

  #verify(auth: SignedAuth, op: OperatorEntry, method: string, target: string, body: Uint8Array): Actor {
    if (!verifySignedAuth(auth, { method, target, body })) {
      throw new ApiFailure(
        'bad_signature',
        'the signature does not cover this request (method, path and query, ts, nonce and body as sent)',
        { field: 'authorization.sig' },
      );
    }
    this.#replay.remember(auth.key, auth.nonce, auth.ts);
    return { name: op.name, role: op.role, via: 'key', key: auth.key };
  }
}

/** Refuses `actor` with `forbidden` (403) unless its role is at least `needed`. */
export function requireRole(actor: Actor, needed: Role, what: string): void {
  // cast: an actor's role comes from an operators file entry or the admin token, both a Role.
  if (!roleAllows(actor.role as Role, needed)) {
    throw new ApiFailure(
      'forbidden',
      `${what} needs the ${needed} role; operator ${actor.name} is ${actor.role}`,
      {
        field: 'role',
      },
    );
  }
}
