import type { ConstraintFailure } from './decision.js';
import type { RequestVariant } from './request.js';
import {
  describeRequirement,
  REQUIREMENT_REASONS,
  type Requirement,
  type RequirementReason,
} from './requirement.js';
import { requirementFailureText } from './requirement-words.js';

// The `requirements` lines of a rejected node, built on the engine's recording path (every rejected
// node of a full-detail decision goes through here, so nothing is computed twice: the label and the
// words of a requirement are cached per requirement object, which the request digest keeps frozen).

/** A requirement's label and its words per reason, computed once. */
interface Words {
  readonly label: string;
  readonly byReason: (string | undefined)[];
}

const cache = new WeakMap<Requirement, Words>();

function wordsOf(req: Requirement): Words {
  let w = cache.get(req);
  if (w === undefined) {
    w = { label: describeRequirement(req), byReason: [] };
    cache.set(req, w);
  }
  return w;
}

/**
 * The line of variant `variant` failing requirement `req` for `reason`. Its `detail` holds only the
 * words until {@link labelRequirementLines} names the variant.
 */
export function requirementLine(
  req: Requirement,
  reason: RequirementReason,
  variant: RequestVariant,
): ConstraintFailure {
  const w = wordsOf(req);
  const i = REQUIREMENT_REASONS.indexOf(reason);
  let detail = w.byReason[i];
  if (detail === undefined) {
    detail = requirementFailureText(req, reason);
    w.byReason[i] = detail;
  }
  return variant.alternative === undefined
    ? { constraint: 'requirements', detail, variant: variant.name, requirement: w.label, reason }
    : {
        constraint: 'requirements',
        detail,
        variant: variant.name,
        alternative: variant.alternative,
        requirement: w.label,
        reason,
      };
}

type Mutable = { -readonly [K in keyof ConstraintFailure]: ConstraintFailure[K] };

let scratch = new Uint8Array(64);

/**
 * Finishes the lines recorded from `from` on by {@link requirementLine}: lines of one variant that say
 * the same thing (its alternatives failing alike, `linux` and `macos` both lacking
 * `cpu.arch.aarch64`) become one line naming the variant alone, without `alternative`; the others
 * name their alternative (`aarch64-native (macos): node has no capability os.macos`).
 */
export function labelRequirementLines(out: ConstraintFailure[], from: number): void {
  const n = out.length - from;
  if (n > scratch.length) scratch = new Uint8Array(n);
  const shared = scratch;
  shared.fill(0, 0, n);
  let kept = from;
  for (let i = from; i < out.length; i++) {
    const f = out[i]!;
    let dup = -1;
    if (f.constraint === 'requirements' && f.variant !== undefined) {
      for (let j = from; j < kept; j++) {
        const g = out[j]!;
        if (g.variant === f.variant && g.detail === f.detail && g.constraint === 'requirements') {
          dup = j;
          break;
        }
      }
    }
    if (dup >= 0) shared[dup - from] = 1;
    else out[kept++] = f;
  }
  out.length = kept;
  for (let i = from; i < kept; i++) {
    const f = out[i]!;
    if (f.constraint !== 'requirements' || f.variant === undefined) continue;
    // cast: lines from `from` on are fresh objects requirementLine built for this call: detail may be rewritten
    if (f.alternative === undefined) (f as { detail: string }).detail = `${f.variant}: ${f.detail}`;
    else if (shared[i - from] === 1) {
      // One line for every alternative: the same fields without `alternative` (no spread: hot path).
      const merged: Mutable = {
        constraint: 'requirements',
        detail: `${f.variant}: ${f.detail}`,
        variant: f.variant,
      };
      if (f.requirement !== undefined) merged.requirement = f.requirement;
      if (f.reason !== undefined) merged.reason = f.reason;
      out[i] = merged;
      // cast: as above
    } else (f as { detail: string }).detail = `${f.variant} (${f.alternative}): ${f.detail}`;
  }
}
