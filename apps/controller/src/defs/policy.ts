import type { CommandDef, FlagDef } from '@heddle/cli-kit';
import { JSON_FLAG } from '../command-def.js';

// The definitions of `heddle policy check` and `policy validate` (docs/cli.md, docs/policy.md). Data
// only, so that help and completion load nothing else.

/** The flags of `policy check` that set one field of the gate context, flag to field. */
export const CONTEXT_FLAGS = {
  kind: 'kind',
  'package-trust': 'package_trust',
  'node-tier': 'node_tier',
  network: 'network',
  secrets: 'secrets',
  emulated: 'emulated',
  accelerator: 'accelerator',
  'resource-cost': 'resource_cost',
  'package-id': 'package_id',
  'signer-keys': 'signer_keys',
  'artifact-hashes': 'artifact_hashes',
} as const;

const CONTEXT_VALUES: Readonly<Record<keyof typeof CONTEXT_FLAGS, string>> = {
  kind: '<kind>',
  'package-trust': '<t>',
  'node-tier': '<t>',
  network: '<n>',
  secrets: '<true|false>',
  emulated: '<true|false>',
  accelerator: '<a>',
  'resource-cost': '<0..1>',
  'package-id': '<id>',
  'signer-keys': '<k1,k2>',
  'artifact-hashes': '<h1,h2>',
};

const contextFlags: FlagDef[] = Object.entries(CONTEXT_VALUES).map(([name, value]) => ({
  name,
  kind: 'string',
  value,
  description: `the context field ${name.replace(/-/g, '_')} (overrides --context)`,
}));

/** `heddle policy check`. */
export const POLICY_CHECK: CommandDef = {
  name: 'policy check',
  summary: 'dry-run one gate decision and print the verdict and the deciding rule',
  positionals: [],
  flags: [
    { name: 'policy', kind: 'string', value: '<file>', required: true, description: 'the policy file' },
    {
      name: 'action',
      kind: 'string',
      value: '<action>',
      required: true,
      description: 'the action asked (workload.place, ...)',
    },
    { name: 'context', kind: 'string', value: '<json>', description: 'the gate context as JSON' },
    {
      name: 'context-file',
      kind: 'string',
      value: '<file>',
      description: 'the gate context from a JSON file',
    },
    ...contextFlags,
    { name: 'agent', kind: 'string', value: '<name>', default: 'operator', description: 'who asks' },
    { name: 'teardown', kind: 'boolean', description: 'the action tears down (stop, unload)' },
    {
      name: 'revocations',
      kind: 'string',
      value: '<file>',
      description: 'a signed revocation list (needs --trust)',
    },
    {
      name: 'trust',
      kind: 'string',
      value: '<file>',
      description: 'the operator keys that sign --revocations',
    },
    { name: 'explain', kind: 'boolean', description: 'print how every rule matched' },
    JSON_FLAG,
  ],
  examples: ['policy check --policy policy.json --action workload.place --node-tier paired --network none'],
};

/** `heddle policy validate`. */
export const POLICY_VALIDATE: CommandDef = {
  name: 'policy validate',
  summary: 'validate a policy file, listing every problem',
  positionals: [{ name: 'file', description: 'the policy file' }],
  flags: [JSON_FLAG],
};

/** `heddle policy`. */
export const POLICY: CommandDef = {
  name: 'policy',
  summary: 'check and validate governance policies',
  subcommands: [POLICY_CHECK, POLICY_VALIDATE],
};
