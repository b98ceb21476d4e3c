import type { z } from 'zod';

/** One problem found in untrusted input: the field (dotted path, `$` for the whole) and what is wrong. */
export interface FieldIssue {
  readonly field: string;
  readonly message: string;
}

/** Every issue of a zod error as `{field, message}`, fields as dotted paths (`body.files.0.path`). */
export function zodIssues(error: z.ZodError): FieldIssue[] {
  return error.issues.map((issue) => ({
    field: issue.path.length === 0 ? '$' : issue.path.map(String).join('.'),
    message: issue.message,
  }));
}

/** The first issue of a zod error (what a refusal names). */
export function firstZodIssue(error: z.ZodError): FieldIssue {
  return zodIssues(error)[0] ?? { field: '$', message: 'invalid' };
}
