import type { Policy } from './policy.js';

/**
 * The default policy (the same as `examples/policies/default.json`): operator-signed cogs
 * (`operator_attested` or `pinned_signer`) on `paired` or `pinned` nodes, no secrets, no emulation,
 * network at most `lan`; any workload may be revoked. Everything else is denied.
 */
export const DEFAULT_POLICY: Policy = {
  version: 1,
  name: 'default',
  description:
    'Operator-signed cogs on paired nodes, without secrets or emulation, network at most lan. Everything else is denied.',
  rules: [
    {
      id: 'operator-signed-cogs-on-paired-nodes',
      effect: 'permit',
      description:
        'Install, place, run, stop, unload and migrate operator-signed cogs on paired or pinned nodes.',
      actions: [
        'workload.install',
        'workload.place',
        'workload.load',
        'workload.start',
        'workload.stop',
        'workload.unload',
        'workload.migrate',
      ],
      kinds: ['cog'],
      min_package_trust: 'operator_attested',
      min_node_tier: 'paired',
      max_network: 'lan',
      secrets: false,
      emulated: false,
    },
    {
      id: 'revoke-anything',
      effect: 'permit',
      description: 'Revoking takes trust away, so it is allowed for any workload on any node.',
      actions: ['workload.revoke'],
      secrets: true,
      emulated: true,
      accelerators: '*',
    },
  ],
};
