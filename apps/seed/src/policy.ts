import { existsSync } from 'node:fs';
import { errorMessage } from '@heddle/cli-kit';
import { HeddleError } from '@heddle/envelope';
import { loadPolicyFile, type Policy } from '@heddle/gate';
import { badInput } from './cli-error.js';
import { profilePath } from './home.js';

/**
 * The built-in policy of `heddle-seed` when the profile has no `policy.json`: the operator's pins are
 * the authority, so every lifecycle action on a pinned store cog (`operator_attested`) is permitted
 * on a Seed reached over a pinned or local link (tier `paired` or `pinned`), without secrets or
 * emulation, whatever network the Seed gives its cogs (the firmware decides that); a console run may
 * stop and resume any cog (one the operator never pinned is gated at trust `unsigned`). Everything
 * else is denied (the gate is default deny). Revocations are always allowed.
 */
export const SEED_DEFAULT_POLICY: Policy = {
  version: 1,
  name: 'heddle-seed-default',
  description:
    'Pinned Cognitum Seed store cogs on a paired or pinned Seed: install, load, start, stop, unload. Everything else is denied.',
  rules: [
    {
      id: 'pinned-seed-cogs',
      effect: 'permit',
      description: 'The operator pinned the cog (id, version, optional sha256): run it on this Seed.',
      actions: ['workload.install', 'workload.load', 'workload.start', 'workload.stop', 'workload.unload'],
      kinds: ['cog'],
      min_package_trust: 'operator_attested',
      min_node_tier: 'paired',
      max_network: 'egress',
      secrets: false,
      emulated: false,
    },
    {
      id: 'preempt-for-console',
      effect: 'permit',
      description:
        "A console run needs the sensor feed to itself: it may stop and resume any cog on the Seed, also one the operator never pinned (someone else's, gated and chained at trust unsigned).",
      actions: ['workload.stop', 'workload.start'],
      kinds: ['cog'],
      min_package_trust: 'unsigned',
      min_node_tier: 'paired',
      max_network: 'egress',
      secrets: false,
      emulated: false,
    },
    {
      id: 'revoke-anything',
      effect: 'permit',
      description: 'Revoking takes trust away, so it is always allowed.',
      actions: ['workload.revoke'],
      secrets: true,
      emulated: true,
      accelerators: '*',
    },
  ],
};

/** The policy in force for `home`: its `policy.json` when present (validated), else the built-in one. */
export function policyFor(home: string): { policy: Policy; source: string } {
  const path = profilePath(home, 'policy');
  if (!existsSync(path)) return { policy: SEED_DEFAULT_POLICY, source: 'built-in' };
  try {
    return { policy: loadPolicyFile(path), source: path };
  } catch (err) {
    throw badInput(
      'policy_invalid',
      `${path}: ${errorMessage(err)}`,
      err instanceof HeddleError ? err.field : undefined,
      err,
    );
  }
}
