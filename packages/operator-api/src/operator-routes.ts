/**
 * The bodies and answers of the operator-management routes (`/v1/operators`, `/v1/whoami`), and the
 * handlers that serve them from an {@link OperatorStore}.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { type OperatorStore, tokenHash } from './operator-store.js';
import { type OperatorEntry, OperatorNameSchema, RoleSchema } from './operators-file.js';
import type { Role } from './roles.js';

/** The body of `POST /v1/operators`: a name, a role, and a public key or `token: true`. */
export type AddOperatorBody =
  | { readonly name: string; readonly role: Role; readonly public_key: string }
  | { readonly name: string; readonly role: Role; readonly token: true };

/** Schema of {@link AddOperatorBody}. */
export const AddOperatorBodySchema: z.ZodType<AddOperatorBody, unknown> = z
  .strictObject({
    name: OperatorNameSchema,
    role: RoleSchema,
    public_key: z
      .string()
      .regex(/^[0-9a-f]{64}$/, 'expected an Ed25519 public key as 64 lower-case hex characters')
      .optional(),
    token: z.literal(true).optional(),
  })
  .refine((b) => (b.public_key === undefined) !== (b.token === undefined), {
    message: 'give exactly one of public_key and token',
    path: ['public_key'],
  })
  .transform(
    (b): AddOperatorBody =>
      b.public_key !== undefined
        ? { name: b.name, role: b.role, public_key: b.public_key }
        : { name: b.name, role: b.role, token: true },
  );

/** An operator as the API shows it (a token operator's hash is never shown). */
export interface OperatorView {
  readonly name: string;
  readonly role: Role;
  readonly added_at_ms: number;
  /** `key` for a signing operator, `token` for a bearer-token one. */
  readonly kind: 'key' | 'token';
  readonly public_key?: string | undefined;
}

/** Schema of {@link OperatorView}. */
export const OperatorViewSchema: z.ZodType<OperatorView> = z.strictObject({
  name: OperatorNameSchema,
  role: RoleSchema,
  added_at_ms: z.int().min(0),
  kind: z.enum(['key', 'token']),
  public_key: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
});

/** The answer of `POST /v1/operators`: the operator, and a new token's value (shown this once). */
export interface AddOperatorAnswer {
  readonly operator: OperatorView;
  readonly token?: string | undefined;
}

/** Schema of {@link AddOperatorAnswer}. */
export const AddOperatorAnswerSchema: z.ZodType<AddOperatorAnswer> = z.strictObject({
  operator: OperatorViewSchema,
  token: z
    .string()
    .regex(/^hdt_[0-9a-f]{64}$/)
    .optional(),
});

/** Who the API takes the caller for (`GET /v1/whoami`). */
export interface WhoAmI {
  readonly name: string;
  readonly role: Role;
  readonly via: 'key' | 'token';
  readonly key?: string | undefined;
}

/** Schema of {@link WhoAmI}. */
export const WhoAmISchema: z.ZodType<WhoAmI> = z.strictObject({
  name: z.string().min(1).max(64),
  role: RoleSchema,
  via: z.enum(['key', 'token']),
  key: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
});

/** The view of a stored operator. */
export function operatorView(o: OperatorEntry): OperatorView {
  return {
    name: o.name,
    role: o.role,
    added_at_ms: o.added_at_ms,
    kind: 'public_key' in o ? 'key' : 'token',
    ...('public_key' in o ? { public_key: o.public_key } : {}),
  };
}

/** A new operator token: `hdt_` and 64 lower-case hex characters (256 random bits). */
export function newOperatorToken(): string {
  return `hdt_${randomBytes(32).toString('hex')}`;
}

/**
 * Adds an operator to `store` from a validated body: a key operator as given, a token operator with a
 * new token (only its SHA-256 is stored; the token is in the answer, once).
 */
export function addOperator(store: OperatorStore, body: AddOperatorBody, now: number): AddOperatorAnswer {
  if ('public_key' in body) {
    const entry = store.add({
      name: body.name,
      role: body.role,
      added_at_ms: now,
      public_key: body.public_key,
    });
    return { operator: operatorView(entry) };
  }
  const token = newOperatorToken();
  const entry = store.add({
    name: body.name,
    role: body.role,
    added_at_ms: now,
    token_sha256: tokenHash(token),
  });
  return { operator: operatorView(entry), token };
}
