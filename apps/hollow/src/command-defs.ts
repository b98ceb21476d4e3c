import type { CommandDef } from '@heddle/cli-kit';

// The definition of `heddle-hollow run`: what it parses and what its --help says (docs/hollow.md).
// Data only, so that help loads nothing else.

/** `heddle-hollow run`. */
export const RUN: CommandDef = {
  name: 'run',
  summary: 'run many simulated hosts in this process (JSON lines on stdout, control lines on stdin)',
  positionals: [],
  flags: [
    { name: 'dir', kind: 'string', value: '<dir>', default: 'hollow', description: 'the fleet directory' },
    { name: 'count', kind: 'string', value: 'N', default: '100', description: 'how many hosts (1 to 20000)' },
    {
      name: 'controller',
      kind: 'string',
      value: '<pubkey-hex>',
      multiple: true,
      description: 'a controller key the hosts obey (as heddle-host init --controller)',
    },
    {
      name: 'trust',
      kind: 'string',
      value: '<file>',
      required: true,
      description: "the hosts' trust anchors (the trust file a real host is given)",
    },
    {
      name: 'policy',
      kind: 'string',
      value: '<file>',
      description: "the hosts' policy (default: the default policy)",
    },
    {
      name: 'routes',
      kind: 'string',
      value: '<native,wasi>',
      default: 'native',
      description: 'simulated routes',
    },
    {
      name: 'tier',
      kind: 'string',
      value: '<discovered|paired|pinned>',
      default: 'paired',
      description: "the hosts' own tier, and the tier they are enrolled with",
    },
    {
      name: 'start-latency-ms',
      kind: 'string',
      value: 'MS',
      default: '0',
      description: 'time each start takes',
    },
    {
      name: 'failure-rate',
      kind: 'string',
      value: 'P',
      default: '0',
      description: 'probability (0 to 1) that a start fails',
    },
    { name: 'seed', kind: 'string', value: 'N', description: 'seed of the failure dice (default: random)' },
    {
      name: 'chain',
      kind: 'string',
      value: '<file|memory>',
      default: 'file',
      description: 'where each host keeps its chain',
    },
    {
      name: 'listen',
      kind: 'string',
      value: '<host>',
      default: '127.0.0.1',
      description: 'the address the hosts listen on',
    },
    {
      name: 'controller-lease-secs',
      kind: 'string',
      value: 'S',
      description: "each host's controller lease, as a real host's controller_lease_secs (default none)",
    },
    {
      name: 'enrol',
      kind: 'string',
      value: '<controller-home>',
      description: 'add every host to the controller running in this home (POST /v1/nodes with its key)',
    },
  ],
  examples: ['run --count 2000 --controller <hex> --trust trust.json --enrol ~/.heddle'],
};
