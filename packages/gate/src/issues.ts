import type { z } from 'zod';
import type { FieldIssue } from './errors.js';

/** Renders a path such as `['rules', 2, 'kinds', 0]` as `rules[2].kinds[0]` (`$` when empty). */
export function fieldPath(path: readonly PropertyKey[], prefix = ''): string {
  let out = prefix;
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += out === '' ? String(p) : `.${String(p)}`;
  }
  return out === '' ? '$' : out;
}

/** Turns zod issues into field-level issues; an unknown key is reported at the key itself. */
export function zodIssues(error: z.ZodError, prefix = '', max = 50): FieldIssue[] {
  const out: FieldIssue[] = [];
  for (const issue of error.issues) {
    if (out.length >= max) break;
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        out.push({ field: fieldPath([...issue.path, key], prefix), message: 'unknown field' });
      }
    } else {
      out.push({ field: fieldPath(issue.path, prefix), message: issue.message });
    }
  }
  return out.length > 0 ? out : [{ field: prefix === '' ? '$' : prefix, message: 'invalid' }];
}
