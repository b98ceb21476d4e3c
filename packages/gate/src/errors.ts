import { type FieldIssue, HeddleError } from '@heddle/envelope';

/**
 * An error from `@heddle/gate`. `code` is stable (see the package README for the list) and `field`
 * names the offending input field as a dotted path (`rules[2].min_node_tier`) when there is one.
 */
export class GateError extends HeddleError {}

/**
 * One field-level problem found while validating a policy, context or store file: `FieldIssue` of
 * `@heddle/envelope`, the field as a path such as `rules[2].min_node_tier` (`$` for the whole).
 */
export type { FieldIssue } from '@heddle/envelope';

/**
 * A validation failure that may list several fields (`heddle policy validate` prints them all).
 * `field` and the message name the first one.
 */
export class ValidationError extends GateError {
  /** Every problem found, in document order. */
  readonly issues: readonly FieldIssue[];

  constructor(code: string, what: string, issues: readonly FieldIssue[], options?: { cause?: unknown }) {
    const first = issues[0] ?? { field: '$', message: 'invalid' };
    const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
    super(code, `invalid ${what}: ${first.field}: ${first.message}${more}`, {
      field: first.field,
      cause: options?.cause,
    });
    this.issues = issues;
  }
}
