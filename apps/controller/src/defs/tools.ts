import type { CommandDef, FlagDef } from '@heddle/cli-kit';
import { JSON_FLAG } from '../command-def.js';

// The definitions of `heddle chain ...`, `pkg ...` and `revoke ...`: what each parses and what its
// --help says (docs/cli.md describes them). Data only, so that help and completion load nothing else.

const CHAIN_FILE = { name: 'file', description: 'the chain file (opened read-only)' } as const;

/** `heddle chain verify`. */
export const CHAIN_VERIFY: CommandDef = {
  name: 'chain verify',
  summary:
    'recompute every hash and link of chain files (and check a checkpoint); with several, their cross-references',
  description:
    'Each file is verified on its own; a directory stands for every *.jsonl file in it. With several controllers (docs/operator-guide.md, "Running several controllers") give every controller\u2019s chain: each event\u2019s `refers_to` entries (a takeover naming the term it ends, a stop or reschedule of an instance another controller placed) must name an event that exists in the named controller\u2019s chain, under the named kind. A reference to a chain that was not given is listed as unresolved and does not fail the check.',
  positionals: [
    { name: 'file', variadic: true, description: 'chain files or directories of them (opened read-only)' },
  ],
  flags: [
    {
      name: 'checkpoint',
      kind: 'string',
      value: '<file>',
      description: 'a signed checkpoint to check the chain against',
    },
    {
      name: 'public-key',
      kind: 'string',
      value: '<hex>',
      description: 'the checkpoint signer: hex, a PEM file or a key file',
    },
    JSON_FLAG,
  ],
};

/** `heddle chain tail`. */
export const CHAIN_TAIL: CommandDef = {
  name: 'chain tail',
  summary: 'print the last events of a chain file',
  positionals: [CHAIN_FILE],
  flags: [
    { name: 'n', kind: 'string', value: '<N>', default: '10', description: 'how many events' },
    { name: 'kind', kind: 'string', value: '<kind>', description: 'only events of this kind' },
    { name: 'source', kind: 'string', value: '<source>', description: 'only events from this source' },
    JSON_FLAG,
  ],
};

/** `heddle chain proof`. */
export const CHAIN_PROOF: CommandDef = {
  name: 'chain proof',
  summary: 'an inclusion proof of one event in the chain’s Merkle tree',
  positionals: [CHAIN_FILE, { name: 'seq', description: 'the event’s sequence number' }],
  flags: [
    {
      name: 'size',
      kind: 'string',
      value: '<N>',
      description: 'the tree of the first N events (default: all)',
    },
    JSON_FLAG,
  ],
};

/** `heddle chain checkpoint`. */
export const CHAIN_CHECKPOINT: CommandDef = {
  name: 'chain checkpoint',
  summary: 'print a signed checkpoint of the chain as it is',
  positionals: [CHAIN_FILE],
  flags: [
    { name: 'key', kind: 'string', value: '<keyfile>', required: true, description: 'the key that signs it' },
    JSON_FLAG,
  ],
};

/** `heddle chain`. */
export const CHAIN: CommandDef = {
  name: 'chain',
  summary: 'verify, tail, prove and checkpoint an audit chain file',
  subcommands: [CHAIN_VERIFY, CHAIN_TAIL, CHAIN_PROOF, CHAIN_CHECKPOINT],
};

const FORCE = { name: 'force', kind: 'boolean', description: 'replace what is there' } as const;
const PKG_DIR = { name: 'dir', description: 'the package directory' } as const;

/** `heddle pkg init`. */
export const PKG_INIT: CommandDef = {
  name: 'pkg init',
  summary: 'write a cog.json template',
  positionals: [{ name: 'dir', description: 'where to write it (default: .)', optional: true }],
  flags: [
    { name: 'id', kind: 'string', value: '<id>', default: 'hello-cog', description: 'the workload id' },
    FORCE,
    JSON_FLAG,
  ],
};

/** `heddle pkg build`. */
export const PKG_BUILD: CommandDef = {
  name: 'pkg build',
  summary: 'build a package from a source directory (and sign it)',
  positionals: [{ name: 'src', description: 'the source directory (with its cog.json)' }],
  flags: [
    {
      name: 'out',
      short: 'o',
      kind: 'string',
      value: '<dir>',
      required: true,
      description: 'the package directory to write',
    },
    { name: 'key', kind: 'string', value: '<file>', description: 'sign it with this key' },
    FORCE,
    JSON_FLAG,
  ],
  examples: ['pkg build ./hello -o ./hello.pkg --key operator.key'],
};

/** `heddle pkg sign`. */
export const PKG_SIGN: CommandDef = {
  name: 'pkg sign',
  summary: 'add a signature to a package',
  positionals: [PKG_DIR],
  flags: [
    { name: 'key', kind: 'string', value: '<file>', required: true, description: 'the signing key' },
    JSON_FLAG,
  ],
};

/** `heddle pkg verify`. */
export const PKG_VERIFY: CommandDef = {
  name: 'pkg verify',
  summary: 'verify a package against trust anchors (and revocations)',
  positionals: [PKG_DIR],
  flags: [
    { name: 'trust', kind: 'string', value: '<file>', required: true, description: 'the trust anchors' },
    {
      name: 'revocations',
      kind: 'string',
      value: '<file>',
      description: 'a signed revocation list (fails closed)',
    },
    { name: 'max-file-bytes', kind: 'string', value: '<N>', description: 'refuse a file larger than this' },
    JSON_FLAG,
  ],
};

/** `heddle pkg inspect`. */
export const PKG_INSPECT: CommandDef = {
  name: 'pkg inspect',
  summary: 'show a package’s envelope without verifying it',
  positionals: [PKG_DIR],
  flags: [JSON_FLAG],
};

/** `heddle pkg`. */
export const PKG: CommandDef = {
  name: 'pkg',
  summary: 'create, build, sign, verify and inspect workload packages',
  subcommands: [PKG_INIT, PKG_BUILD, PKG_SIGN, PKG_VERIFY, PKG_INSPECT],
};

const LIST: FlagDef = {
  name: 'list',
  kind: 'string',
  value: '<file>',
  default: 'revocations.json',
  description: 'the revocation list',
};
const TRUST: FlagDef = {
  name: 'trust',
  kind: 'string',
  value: '<file>',
  description: 'check the signers against these operator keys',
};
const SIGNING_KEY: FlagDef = {
  name: 'key',
  kind: 'string',
  value: '<file>',
  required: true,
  description: 'the operator key that signs the list',
};
const VALID_DAYS: FlagDef = {
  name: 'valid-days',
  kind: 'string',
  value: '<N>',
  description: 'how long the signed list is valid, in days (1..366; default 30)',
};

/** `heddle revoke package|signer|artifact`. */
function revokeDef(kind: 'package' | 'signer' | 'artifact'): CommandDef {
  return {
    name: `revoke ${kind}`,
    summary: `revoke a ${kind} in a signed revocation list`,
    positionals: [{ name: 'ref', description: `the ${kind} to revoke` }],
    flags: [
      SIGNING_KEY,
      LIST,
      TRUST,
      { name: 'reason', kind: 'string', value: '<text>', description: 'why, recorded in the entry' },
      VALID_DAYS,
      JSON_FLAG,
    ],
  };
}

/** `heddle revoke renew`. */
export const REVOKE_RENEW: CommandDef = {
  name: 'revoke renew',
  summary: 're-sign the same entries at the next generation with a fresh expiry',
  positionals: [],
  flags: [
    SIGNING_KEY,
    LIST,
    TRUST,
    VALID_DAYS,
    {
      name: 'above',
      kind: 'string',
      value: '<G>',
      description: 'sign at generation G + 1 (past a host’s mark)',
    },
    JSON_FLAG,
  ],
};

/** `heddle revoke ls`. */
export const REVOKE_LS: CommandDef = {
  name: 'revoke ls',
  summary: 'list a revocation list’s entries',
  positionals: [],
  flags: [LIST, TRUST, JSON_FLAG],
};

/** `heddle revoke package|signer|artifact`, by kind. */
export const REVOKE_ADD: Readonly<Record<'package' | 'signer' | 'artifact', CommandDef>> = {
  package: revokeDef('package'),
  signer: revokeDef('signer'),
  artifact: revokeDef('artifact'),
};

/** `heddle revoke`. */
export const REVOKE: CommandDef = {
  name: 'revoke',
  summary: 'revoke packages, signers and artifacts; renew and list revocations',
  subcommands: [REVOKE_ADD.package, REVOKE_ADD.signer, REVOKE_ADD.artifact, REVOKE_RENEW, REVOKE_LS],
};
