import { z } from 'zod';
import { ROLES, type Role } from './roles.js';

/** The `schema` of the operators file. */
export const OPERATORS_SCHEMA = 'heddle.operators.v1';

/** The operators file in the controller home (mode 0600), written by `heddle operator add|rm`. */
export const OPERATORS_FILE = 'operators.json';

/** An operator's name: 1..64 of `a-z 0-9 . _ -`, starting with a letter or digit. */
export const OperatorNameSchema: z.ZodType<string> = z
  .string()
  .regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'expected 1..64 of a-z 0-9 . _ - (starting with a letter or digit)');

/** Schema of a role. */
export const RoleSchema: z.ZodType<Role> = z.enum(ROLES, { error: `expected one of ${ROLES.join(', ')}` });

const Hex64 = z.string().regex(/^[0-9a-f]{64}$/, 'expected 64 lower-case hex characters');

/**
 * One operator: a name, a role and one credential: an Ed25519 `public_key` (the operator signs each
 * request) or the SHA-256 of a bearer token (`token_sha256`; the token itself is never stored).
 */
export type OperatorEntry = {
  readonly name: string;
  readonly role: Role;
  /** When it was added (Unix ms). */
  readonly added_at_ms: number;
} & ({ readonly public_key: string } | { readonly token_sha256: string });

/** Schema of one {@link OperatorEntry}: exactly one of `public_key` and `token_sha256`. */
export const OperatorEntrySchema: z.ZodType<OperatorEntry, unknown> = z
  .strictObject({
    name: OperatorNameSchema,
    role: RoleSchema,
    added_at_ms: z.int().min(0),
    public_key: Hex64.optional(),
    token_sha256: Hex64.optional(),
  })
  .refine((o) => (o.public_key === undefined) !== (o.token_sha256 === undefined), {
    message: 'give exactly one of public_key and token_sha256',
    path: ['public_key'],
  })
  .transform((o): OperatorEntry => {
    const base = { name: o.name, role: o.role, added_at_ms: o.added_at_ms };
    return o.public_key !== undefined
      ? { ...base, public_key: o.public_key }
      : { ...base, token_sha256: o.token_sha256 ?? '' };
  });

/** `operators.json` as written. */
export interface OperatorsFile {
  readonly schema: typeof OPERATORS_SCHEMA;
  readonly operators: readonly OperatorEntry[];
}

/** Schema of {@link OperatorsFile}: names, keys and token hashes each unique. */
export const OperatorsFileSchema: z.ZodType<OperatorsFile> = z
  .strictObject({
    schema: z.literal(OPERATORS_SCHEMA, { error: `expected "${OPERATORS_SCHEMA}"` }),
    operators: z.array(OperatorEntrySchema).max(10_000),
  })
  .superRefine((f, ctx) => {
    const seen = new Set<string>();
    f.operators.forEach((o, i) => {
      const cred = 'public_key' in o ? `k:${o.public_key}` : `t:${o.token_sha256}`;
      for (const [id, field] of [
        [`n:${o.name}`, 'name'],
        [cred, 'public_key' in o ? 'public_key' : 'token_sha256'],
      ] as const) {
        if (seen.has(id))
          ctx.addIssue({ code: 'custom', path: ['operators', i, field], message: 'given twice' });
        seen.add(id);
      }
    });
  });
