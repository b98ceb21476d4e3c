import { z } from 'zod';
import type { GateContext } from './context.js';
import { referenceString } from './context.js';
import { ValidationError } from './errors.js';
import { zodIssues } from './issues.js';

/** Revoked references: package ids (exact), signer keys and artifact hashes (case-insensitive). */
export interface RevocationInput {
  /** Revoked package ids. */
  readonly package_ids?: readonly string[];
  /** Revoked signer public keys (hex). */
  readonly signer_keys?: readonly string[];
  /** Revoked artifact hashes. */
  readonly artifact_hashes?: readonly string[];
}

/** Which reference of a context is revoked. */
export interface RevokedReference {
  /** The context field that holds it. */
  readonly field: 'package_id' | 'signer_keys' | 'artifact_hashes';
  /** The revoked value. */
  readonly value: string;
}

const list = z.array(referenceString).max(1_000_000, 'more than 1000000 entries').optional();

/** Schema of a revocation input set (a JSON file of `{package_ids?, signer_keys?, artifact_hashes?}`). */
export const RevocationInputSchema: z.ZodType<RevocationInput> = z.strictObject({
  package_ids: list,
  signer_keys: list,
  artifact_hashes: list,
});

/** The set of revoked references the gate checks first. Immutable; build a new one to change it. */
export class RevocationSet {
  private readonly packageIds: ReadonlySet<string>;
  private readonly signerKeys: ReadonlySet<string>;
  private readonly artifactHashes: ReadonlySet<string>;

  constructor(input: RevocationInput = {}) {
    this.packageIds = new Set(input.package_ids ?? []);
    this.signerKeys = new Set((input.signer_keys ?? []).map((s) => s.toLowerCase()));
    this.artifactHashes = new Set((input.artifact_hashes ?? []).map((s) => s.toLowerCase()));
  }

  /** Validates an untrusted revocation set; throws `ValidationError` (code `invalid_revocations`). */
  static parse(input: unknown): RevocationSet {
    let r: ReturnType<typeof RevocationInputSchema.safeParse>;
    try {
      r = RevocationInputSchema.safeParse(input);
    } catch (err) {
      throw new ValidationError(
        'invalid_revocations',
        'revocations',
        [{ field: '$', message: 'unreadable' }],
        {
          cause: err,
        },
      );
    }
    if (!r.success) throw new ValidationError('invalid_revocations', 'revocations', zodIssues(r.error));
    return new RevocationSet(r.data);
  }

  /** The number of revoked references. */
  get size(): number {
    return this.packageIds.size + this.signerKeys.size + this.artifactHashes.size;
  }

  /** The first revoked reference of `ctx` (package id, then signer keys, then artifact hashes), if any. */
  find(ctx: GateContext): RevokedReference | undefined {
    if (this.size === 0) return undefined;
    if (this.packageIds.has(ctx.package_id)) return { field: 'package_id', value: ctx.package_id };
    for (const k of ctx.signer_keys) if (this.signerKeys.has(k)) return { field: 'signer_keys', value: k };
    for (const h of ctx.artifact_hashes) {
      if (this.artifactHashes.has(h)) return { field: 'artifact_hashes', value: h };
    }
    return undefined;
  }

  /** The set as plain lists (sorted), e.g. to save it. */
  toJSON(): { package_ids: string[]; signer_keys: string[]; artifact_hashes: string[] } {
    return {
      package_ids: [...this.packageIds].sort(),
      signer_keys: [...this.signerKeys].sort(),
      artifact_hashes: [...this.artifactHashes].sort(),
    };
  }
}
