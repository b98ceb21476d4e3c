import { zodIssues as envelopeIssues } from '@heddle/envelope';
import { z } from 'zod';
import type { FieldIssue } from './errors.js';

/**
 * Field-level issues of a zod error, built on `zodIssues` of `@heddle/envelope`, in the gate's
 * documented form: array indexes in brackets (`rules[2].kinds[0]`, `$` for the whole document), under
 * an optional `prefix`, each unknown key reported at the key itself (`rules[0].colour: unknown field`),
 * at most `max` of them. (The gate's schemas have no numeric or dotted object keys, so the dotted path
 * envelope renders maps back exactly.)
 */
export function zodIssues(error: z.ZodError, prefix = '', max = 50): FieldIssue[] {
  const expanded = error.issues.flatMap((issue): z.core.$ZodIssue[] =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ ...issue, path: [...issue.path, key], message: 'unknown field' }))
      : [issue],
  );
  const out = envelopeIssues(new z.ZodError(expanded))
    .slice(0, max)
    .map((i) => ({ field: bracketed(i.field, prefix), message: i.message }));
  return out.length > 0 ? out : [{ field: prefix === '' ? '$' : prefix, message: 'invalid' }];
}

/** `rules.2.kinds.0` (envelope's form) as `rules[2].kinds[0]`, under `prefix`. */
function bracketed(dotted: string, prefix: string): string {
  let out = prefix;
  if (dotted !== '$') {
    for (const p of dotted.split('.')) {
      if (/^(0|[1-9][0-9]*)$/.test(p)) out += `[${p}]`;
      else out += out === '' ? p : `.${p}`;
    }
  }
  return out === '' ? '$' : out;
}
