import { errorMessage, HeddleError, parseJson, readTextBounded } from '@heddle/envelope';
import {
  NETWORK_LEVELS,
  type NetworkLevel,
  NODE_TIERS,
  type NodeTier,
  networkRank,
  tierRank,
} from '@heddle/model';
import { z } from 'zod';
import { referenceString } from './context.js';
import { GateError, ValidationError } from './errors.js';
import { zodIssues } from './issues.js';
import {
  ACTIONS,
  type Action,
  ALL_ACTIONS,
  PACKAGE_TRUST_LEVELS,
  type PackageTrust,
  trustRank,
} from './levels.js';

/** What a matching rule does. */
export type RuleEffect = 'permit' | 'deny' | 'defer';

/**
 * One policy rule: a set of conditions that must all hold for the rule to match, and an effect.
 * Omitted range conditions are unbounded. `secrets`, `emulated` and `accelerators` are allowances on a
 * permit (omitted means "not allowed") and selectors on a deny or defer (omitted means "any"); see
 * docs/policy.md.
 */
export interface PolicyRule {
  /** Unique id, named in every decision the rule makes (`builtin:` is reserved). */
  readonly id: string;
  /** permit, deny or defer (to a human). */
  readonly effect: RuleEffect;
  /** Free text for people. */
  readonly description?: string;
  /** The reason given in a deny or defer decision (a default is generated when omitted). */
  readonly reason?: string;
  /** The actions the rule covers; `workload.*` stands for all eight. */
  readonly actions: readonly (Action | typeof ALL_ACTIONS)[];
  /** The agents (callers of `check`) the rule covers; omitted means any. */
  readonly agents?: readonly string[];
  /** The workload kinds the rule covers; omitted means any. */
  readonly kinds?: readonly string[];
  /** Lowest package trust matched. */
  readonly min_package_trust?: PackageTrust;
  /** Highest package trust matched (useful on deny rules: "deny anything below ..."). */
  readonly max_package_trust?: PackageTrust;
  /** Lowest node tier matched. */
  readonly min_node_tier?: NodeTier;
  /** Highest node tier matched. */
  readonly max_node_tier?: NodeTier;
  /** Least network matched (useful on defer rules: "egress needs a human"). */
  readonly min_network?: NetworkLevel;
  /** Most network matched. */
  readonly max_network?: NetworkLevel;
  /** Permit: whether secrets are allowed (default false). Deny/defer: match only this value. */
  readonly secrets?: boolean;
  /** Permit: whether emulation is allowed (default false). Deny/defer: match only this value. */
  readonly emulated?: boolean;
  /**
   * Permit: the accelerators allowed (`*` for any; default none; a context without an accelerator
   * always passes). Deny/defer: match only contexts using one of these (`*`: any accelerator).
   */
  readonly accelerators?: readonly string[] | '*';
  /** Lowest resource cost matched, 0..1. */
  readonly min_resource_cost?: number;
  /** Highest resource cost matched, 0..1. */
  readonly max_resource_cost?: number;
  /**
   * Defer only: how long a request this rule defers waits for an operator before it expires, in
   * seconds (1..2 592 000, 30 days); default the approval queue's (15 minutes).
   */
  readonly approval_ttl_secs?: number;
}

/** A policy file: `{version: 1, name, description?, rules}`. */
export interface Policy {
  /** Format version, 1. */
  readonly version: 1;
  /** A name for people, chained with every decision. */
  readonly name: string;
  /** Free text for people. */
  readonly description?: string;
  /** The rules. Order matters only among rules of the same effect (the first matching one decides). */
  readonly rules: readonly PolicyRule[];
}

/** Largest policy file accepted, in bytes. */
export const MAX_POLICY_BYTES: number = 1024 * 1024;

/** Longest `approval_ttl_secs` of a defer rule: 30 days. */
export const MAX_APPROVAL_TTL_SECS: number = 30 * 24 * 60 * 60;

const RULE_ID = /^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}$/;
const cost = z.number().min(0, 'must be at least 0').max(1, 'must be at most 1');
const refList = z.array(referenceString).min(1, 'must not be empty').max(1024, 'more than 1024 entries');

const RuleSchema = z.strictObject({
  id: z
    .string()
    .regex(
      RULE_ID,
      'expected 1..128 characters: letters, digits and . _ : @ / - (starting with a letter or digit)',
    )
    .refine((s) => !s.startsWith('builtin:'), 'the prefix builtin: is reserved'),
  effect: z.enum(['permit', 'deny', 'defer']),
  description: z.string().max(1024, 'longer than 1024 characters').exactOptional(),
  reason: z.string().min(1, 'must not be empty').max(1024, 'longer than 1024 characters').exactOptional(),
  actions: z
    .array(z.enum([...ACTIONS, ALL_ACTIONS]))
    .min(1, 'must name at least one action')
    .max(16, 'more than 16 entries'),
  agents: refList.exactOptional(),
  kinds: refList.exactOptional(),
  min_package_trust: z.enum(PACKAGE_TRUST_LEVELS).exactOptional(),
  max_package_trust: z.enum(PACKAGE_TRUST_LEVELS).exactOptional(),
  min_node_tier: z.enum(NODE_TIERS).exactOptional(),
  max_node_tier: z.enum(NODE_TIERS).exactOptional(),
  min_network: z.enum(NETWORK_LEVELS).exactOptional(),
  max_network: z.enum(NETWORK_LEVELS).exactOptional(),
  secrets: z.boolean().exactOptional(),
  emulated: z.boolean().exactOptional(),
  accelerators: z
    .union([z.literal('*'), z.array(referenceString).max(1024, 'more than 1024 entries')])
    .exactOptional(),
  min_resource_cost: cost.exactOptional(),
  max_resource_cost: cost.exactOptional(),
  approval_ttl_secs: z
    .int('must be a whole number of seconds')
    .min(1, 'must be at least 1')
    .max(MAX_APPROVAL_TTL_SECS, `must be at most ${MAX_APPROVAL_TTL_SECS} (30 days)`)
    .exactOptional(),
});

/** Schema of a policy document, including cross-field checks (unique ids, min <= max). */
export const PolicySchema: z.ZodType<Policy> = z
  .strictObject({
    version: z.literal(1),
    name: z.string().min(1, 'must not be empty').max(128, 'longer than 128 characters'),
    description: z.string().max(4096, 'longer than 4096 characters').exactOptional(),
    rules: z.array(RuleSchema).max(10_000, 'more than 10000 rules'),
  })
  .superRefine((p, ctx) => {
    const seen = new Map<string, number>();
    p.rules.forEach((r, i) => {
      const first = seen.get(r.id);
      if (first !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['rules', i, 'id'],
          message: `duplicate of rules[${first}].id`,
        });
      } else seen.set(r.id, i);
      if (r.approval_ttl_secs !== undefined && r.effect !== 'defer') {
        ctx.addIssue({
          code: 'custom',
          path: ['rules', i, 'approval_ttl_secs'],
          message: 'only a defer rule has an approval_ttl_secs',
        });
      }
      const range = (name: string, min: number | undefined, max: number | undefined): void => {
        if (min !== undefined && max !== undefined && min > max) {
          ctx.addIssue({
            code: 'custom',
            path: ['rules', i, `min_${name}`],
            message: `is above max_${name}`,
          });
        }
      };
      range('package_trust', rank(r.min_package_trust, trustRank), rank(r.max_package_trust, trustRank));
      range('node_tier', rank(r.min_node_tier, tierRank), rank(r.max_node_tier, tierRank));
      range('network', rank(r.min_network, networkRank), rank(r.max_network, networkRank));
      range('resource_cost', r.min_resource_cost, r.max_resource_cost);
    });
  });

function rank<T>(v: T | undefined, f: (v: T) => number): number | undefined {
  return v === undefined ? undefined : f(v);
}

/** Validates an untrusted policy value; throws `ValidationError` (code `invalid_policy`) naming each field. */
export function parsePolicy(input: unknown): Policy {
  let r: ReturnType<typeof PolicySchema.safeParse>;
  try {
    r = PolicySchema.safeParse(input);
  } catch (err) {
    const issues = [{ field: '$', message: `unreadable: ${errorMessage(err)}` }];
    throw new ValidationError('invalid_policy', 'policy', issues, { cause: err });
  }
  if (!r.success) throw new ValidationError('invalid_policy', 'policy', zodIssues(r.error));
  return r.data;
}

/**
 * Parses policy JSON text strictly (duplicate keys refused, bounded size and depth) and validates it.
 * Malformed JSON is refused with code `invalid_policy_json`, an invalid policy with `invalid_policy`.
 */
export function parsePolicyText(text: string): Policy {
  let value: unknown;
  try {
    value = parseJson(text, { integersOnly: false, maxBytes: MAX_POLICY_BYTES });
  } catch (err) {
    if (err instanceof HeddleError) {
      throw new ValidationError('invalid_policy_json', 'policy JSON', [
        { field: err.field ?? '$', message: err.message },
      ]);
    }
    throw err;
  }
  return parsePolicy(value);
}

/** Reads and validates a policy file (`policy_unreadable` when it cannot be read or is too large). */
export function loadPolicyFile(path: string): Policy {
  let text: string;
  try {
    text = readTextBounded(path, MAX_POLICY_BYTES);
  } catch (err) {
    throw new GateError('policy_unreadable', `cannot read policy ${path}: ${errorMessage(err)}`, {
      cause: err,
    });
  }
  return parsePolicyText(text);
}
