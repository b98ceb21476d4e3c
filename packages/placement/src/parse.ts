import type { z } from 'zod';
import { PlacementError, type PlacementErrorCode } from './errors.js';

/** Renders a zod issue path as a dotted field (`capabilities[2].attrs.size_mb`), `$` for the root. */
export function fieldOf(path: readonly PropertyKey[], root?: string): string {
  let out = root ?? '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += out === '' ? String(p) : `.${String(p)}`;
  }
  return out === '' ? '$' : out;
}

/**
 * Parses `input` with `schema`; on failure throws {@link PlacementError} with `code`, the first issue's
 * field (prefixed with `root` when given) and a message naming it.
 */
export function parseOrThrow<T>(
  schema: z.ZodType<T>,
  input: unknown,
  code: PlacementErrorCode,
  what: string,
  root?: string,
): T {
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const field = fieldOf(issue?.path ?? [], root);
  throw new PlacementError(code, `invalid ${what}: ${field}: ${issue?.message ?? 'invalid'}`, {
    field,
    cause: r.error,
  });
}
