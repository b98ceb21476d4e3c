import { errorMessage } from '@heddle/envelope';
import type { RevocationCheck, RevocationRefs, RevokedSubject } from '@heddle/model';
import { z } from 'zod';
import { type GateContext, referenceString } from './context.js';
import { BUILTIN_RULES } from './decision.js';
import { ValidationError } from './errors.js';
import { zodIssues } from './issues.js';

/** Revoked references for a {@link RevocationSet}: package ids, signer keys, artifact hashes. */
export interface RevocationInput {
  /** Revoked package ids. */
  readonly package_ids?: readonly string[];
  /** Revoked signer public keys (hex). */
  readonly signer_keys?: readonly string[];
  /** Revoked artifact hashes. */
  readonly artifact_hashes?: readonly string[];
}

const list = z.array(referenceString).max(1_000_000, 'more than 1000000 entries').exactOptional();

/** Schema of a revocation input set (`{package_ids?, signer_keys?, artifact_hashes?}`). */
export const RevocationInputSchema: z.ZodType<RevocationInput> = z.strictObject({
  package_ids: list,
  signer_keys: list,
  artifact_hashes: list,
});

const lower = (xs: readonly string[] | undefined): ReadonlySet<string> =>
  new Set((xs ?? []).map((s) => s.toLowerCase()));

/**
 * An in-memory, unsigned {@link RevocationCheck} for tests and library users: every reference is
 * compared case-insensitively. Immutable; build a new one to change it. Where revocations are
 * enforced from a file, use the signed `RevocationList` of `@heddle/package` instead.
 */
export class RevocationSet implements RevocationCheck {
  private readonly packageIds: ReadonlySet<string>;
  private readonly signerKeys: ReadonlySet<string>;
  private readonly artifactHashes: ReadonlySet<string>;
  private failure: string | undefined = undefined;

  constructor(input: RevocationInput = {}) {
    this.packageIds = lower(input.package_ids);
    this.signerKeys = lower(input.signer_keys);
    this.artifactHashes = lower(input.artifact_hashes);
  }

  /** A set that fails closed: every check answers `list-unavailable` with `reason`. */
  static failedClosed(reason: string): RevocationSet {
    const s = new RevocationSet();
    s.failure = reason;
    return s;
  }

  /** Validates an untrusted revocation set; throws `ValidationError` (code `invalid_revocations`). */
  static parse(input: unknown): RevocationSet {
    let r: ReturnType<typeof RevocationInputSchema.safeParse>;
    try {
      r = RevocationInputSchema.safeParse(input);
    } catch (err) {
      const issues = [{ field: '$', message: 'unreadable' }];
      throw new ValidationError('invalid_revocations', 'revocations', issues, { cause: err });
    }
    if (!r.success) throw new ValidationError('invalid_revocations', 'revocations', zodIssues(r.error));
    return new RevocationSet(r.data);
  }

  /** The number of revoked references. */
  get size(): number {
    return this.packageIds.size + this.signerKeys.size + this.artifactHashes.size;
  }

  /** See {@link RevocationCheck.firstRevoked}. */
  firstRevoked(refs: RevocationRefs): RevokedSubject | undefined {
    if (this.failure !== undefined) return { kind: 'list-unavailable', ref: '*', reason: this.failure };
    if (this.size === 0) return undefined;
    const id = refs.packageId?.toLowerCase();
    if (id !== undefined && this.packageIds.has(id)) return { kind: 'package', ref: id };
    for (const k of refs.signerKeys) {
      const v = k.toLowerCase();
      if (this.signerKeys.has(v)) return { kind: 'signer', ref: v };
    }
    for (const h of refs.artifactHashes) {
      const v = h.toLowerCase();
      if (this.artifactHashes.has(v)) return { kind: 'artifact', ref: v };
    }
    return undefined;
  }

  /** The set as plain lists (sorted, lower-case), e.g. to save it. */
  toJSON(): { package_ids: string[]; signer_keys: string[]; artifact_hashes: string[] } {
    return {
      package_ids: [...this.packageIds].sort(),
      signer_keys: [...this.signerKeys].sort(),
      artifact_hashes: [...this.artifactHashes].sort(),
    };
  }
}

/** Why a context is refused by the revocation check (see {@link checkRevocations}). */
export interface RevocationFinding {
  /** `builtin:revoked`, or `builtin:revocations_unavailable` when the check failed closed. */
  readonly rule: 'builtin:revoked' | 'builtin:revocations_unavailable';
  /** The context field holding the revoked reference (`revocations` when the list is unavailable). */
  readonly field: 'package_id' | 'signer_keys' | 'artifact_hashes' | 'revocations';
  /** Why, for people. */
  readonly reason: string;
}

const FIELDS = { package: 'package_id', signer: 'signer_keys', artifact: 'artifact_hashes' } as const;
const NAMES = { package: 'package id', signer: 'signer key', artifact: 'artifact hash' } as const;

/**
 * Asks `check` about the references of `ctx`. Never throws and fails closed: a check that answers
 * `list-unavailable`, that throws, or that answers something unknown refuses the context.
 */
export function checkRevocations(check: RevocationCheck, ctx: GateContext): RevocationFinding | undefined {
  let hit: RevokedSubject | undefined;
  try {
    hit = check.firstRevoked({
      packageId: ctx.package_id,
      signerKeys: ctx.signer_keys,
      artifactHashes: ctx.artifact_hashes,
    });
  } catch (err) {
    return unavailable(`the revocation check failed: ${errorMessage(err)}`);
  }
  if (hit === undefined || hit === null) return undefined;
  try {
    const why = typeof hit.reason === 'string' && hit.reason !== '' ? `: ${hit.reason}` : '';
    if (hit.kind === 'list-unavailable') return unavailable(hit.reason ?? 'no reason given');
    // cast: checked to be a key of FIELDS just before
    const kind = hit.kind in FIELDS ? (hit.kind as keyof typeof FIELDS) : undefined;
    return {
      rule: BUILTIN_RULES.revoked,
      field: kind === undefined ? 'revocations' : FIELDS[kind],
      reason: `${kind === undefined ? 'reference' : NAMES[kind]} ${String(hit.ref)} is revoked${why}`,
    };
  } catch {
    return unavailable('the revocation check gave an unreadable answer');
  }
}

function unavailable(reason: string): RevocationFinding {
  return {
    rule: BUILTIN_RULES.revocationsUnavailable,
    field: 'revocations',
    reason: `the revocation list is unavailable, so everything is denied (fail closed): ${reason}`,
  };
}
