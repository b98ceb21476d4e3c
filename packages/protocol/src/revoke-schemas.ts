/** The body and answer of `workload.revoke` (section 14.4). */
import { type RevocationListFile, RevocationListFileSchema } from '@heddle/package';
import { z } from 'zod';
import { CountSchema, InstanceIdSchema } from './body-parts.js';

/** Body of `workload.revoke`. */
export type RevokeBody = {
  /** The signed revocation list (`heddle.revocation-list.v1`, the file `heddle revoke` writes). */
  readonly list: RevocationListFile;
};

/** Schema of {@link RevokeBody}: unknown fields refused (the list's signatures are the host's to check). */
export const RevokeBodySchema: z.ZodType<RevokeBody> = z.strictObject({ list: RevocationListFileSchema });

/** What `workload.revoke` answers. */
export type RevokeAnswer = {
  /** The generation the host holds after the call. */
  readonly generation: number;
  /** False when the host already held this list (nothing was written). */
  readonly applied: boolean;
  /** The instances torn down because the list in force revokes them. */
  readonly torn_down: string[];
};

/** Schema of a {@link RevokeAnswer}. */
export const RevokeAnswerSchema: z.ZodType<RevokeAnswer> = z.object({
  generation: CountSchema,
  applied: z.boolean(),
  torn_down: z.array(InstanceIdSchema),
});
